// The message box: Enter sends, Shift+Enter breaks the line, `/` opens command completion.
import { useId, useState, type KeyboardEvent } from "react";
import { slashMatches } from "./slash";

export function Composer({
  running,
  waiting = false,
  disabled,
  onSubmit,
  onStop,
}: {
  running: boolean;
  /** The turn is parked on a decision or an answer: nothing runs, but Stop still ends it. */
  waiting?: boolean;
  disabled: boolean;
  /** Resolves true when the text was taken (the box clears); false keeps it for another try. */
  onSubmit: (text: string) => Promise<boolean>;
  onStop: () => void;
}) {
  const [text, setText] = useState("");
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState(false);
  const listId = useId();
  const inputId = useId();
  const matches = dismissed ? [] : slashMatches(text);
  const menuOpen = matches.length > 0;
  const activeIndex = Math.min(active, Math.max(0, matches.length - 1));

  const change = (value: string) => {
    setText(value);
    setActive(0);
    if (!value.startsWith("/")) setDismissed(false);
  };

  const submit = async () => {
    const value = text.trim();
    if (!value) return;
    // Telnet echo: clear now; the bubble appears only when the engine echoes the message.
    setText("");
    setDismissed(false);
    const taken = await onSubmit(value);
    if (!taken) setText((current) => (current === "" ? value : current));
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.nativeEvent.isComposing) return;
    if (menuOpen) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : -1;
        setActive((activeIndex + step + matches.length) % matches.length);
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        const chosen = matches[activeIndex];
        // A fully typed command with Enter runs straight away; otherwise complete it.
        if (chosen && !(e.key === "Enter" && text === `/${chosen.name}`)) {
          e.preventDefault();
          setText(`/${chosen.name} `);
          setDismissed(true);
          return;
        }
      }
      if (e.key === "Escape") {
        e.preventDefault();
        setDismissed(true);
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      void submit();
    }
  };

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {menuOpen ? (
        <ul className="slash-menu" role="listbox" id={listId} aria-label="Commands">
          {matches.map((c, i) => (
            <li
              key={c.name}
              id={`${listId}-${c.name}`}
              role="option"
              aria-selected={i === activeIndex}
              className={i === activeIndex ? "is-active" : undefined}
              onMouseDown={(e) => {
                e.preventDefault();
                setText(`/${c.name} `);
                setDismissed(true);
              }}
            >
              <code>/{c.name}</code>
              {c.args ? <span className="muted"> {c.args}</span> : null}
              <span className="slash-desc">{c.description}</span>
              {!c.available ? <span className="badge">not available yet</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      <label htmlFor={inputId} className="visually-hidden">
        Message
      </label>
      <textarea
        id={inputId}
        className="composer-input"
        rows={3}
        value={text}
        placeholder={
          running
            ? "The agent is working — a message now is folded into the running turn"
            : waiting
              ? "Waiting for your decision — a message now is queued behind it"
              : "Message the agent, or / for commands"
        }
        onChange={(e) => change(e.target.value)}
        onKeyDown={onKeyDown}
        disabled={disabled}
        role="combobox"
        aria-expanded={menuOpen}
        aria-controls={menuOpen ? listId : undefined}
        aria-autocomplete="list"
        aria-activedescendant={menuOpen && matches[activeIndex] ? `${listId}-${matches[activeIndex].name}` : undefined}
      />
      <div className="composer-actions">
        <span className="muted composer-hint">Enter sends · Shift+Enter new line</span>
        {running || waiting ? (
          <button type="button" className="button button-danger" onClick={onStop}>
            Stop
          </button>
        ) : (
          <button type="submit" className="button button-primary" disabled={disabled || text.trim() === ""}>
            Send
          </button>
        )}
      </div>
    </form>
  );
}
