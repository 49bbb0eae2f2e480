// #chat/{source}: the live conversation of a source — echoed messages, streamed replies, tool cards.
import { useEffect, useRef } from "react";
import {
  useBackend,
  useChat,
  useInbox,
  type ApprovalInfo,
  type ChatItem,
  type InboxItem,
} from "../backend";
import { ApprovalCard, type ApprovalView } from "../components/ApprovalCard";
import { Markdown } from "../components/Markdown";
import { ErrorView, Loading } from "../components/StatusViews";
import { ToolCard } from "../components/ToolCard";
import { Composer } from "./chat/Composer";
import { parseSlash, SLASH_COMMANDS } from "./chat/slash";

/** A card rebuilt from history has no diff of its own; the inbox holds the reviewed one. */
function withInbox(a: ApprovalInfo, item: InboxItem | undefined): ApprovalView {
  if (!item) return a;
  return {
    ...a,
    kind: item.kind,
    path: a.path ?? item.path,
    diff: a.diff ?? item.diff,
    command: a.command ?? item.command,
    workdir: a.workdir ?? item.workdir,
  };
}

function Item({ item, inbox }: { item: ChatItem; inbox: InboxItem[] }) {
  const backend = useBackend();
  switch (item.kind) {
    case "user":
      return (
        <li className={`bubble bubble-user${item.queued ? " is-queued" : ""}`} data-kind="user">
          <p className="bubble-text">{item.content}</p>
          {item.queued ? <span className="badge bubble-queued">queued for the running turn</span> : null}
        </li>
      );
    case "assistant":
      return (
        <li className={`bubble bubble-assistant${item.streaming ? " is-streaming" : ""}`} data-kind="assistant" aria-busy={item.streaming}>
          {item.reasoning ? (
            <details className="reasoning">
              <summary>Reasoning</summary>
              <pre className="prose-pre">{item.reasoning}</pre>
            </details>
          ) : null}
          {item.content ? <Markdown text={item.content} /> : null}
        </li>
      );
    case "tool":
      return (
        <li className="chat-tool" data-kind="tool">
          <ToolCard tool={item}>
            {item.approval ? (
              <ApprovalCard
                approval={withInbox(item.approval, inbox.find((i) => i.tool_call_id === item.toolCallId))}
                onDecide={(id, input) => backend.decide(id, input)}
              />
            ) : null}
          </ToolCard>
        </li>
      );
    case "notice":
      return (
        <li className={`notice notice-${item.tone}`} data-kind="notice" role={item.tone === "error" ? "alert" : "status"}>
          {item.text}
        </li>
      );
  }
}

function ContextMeter({ input, output }: { input: number | null; output: number | null }) {
  if (input === null) return null;
  return (
    <span className="context-meter" title="Tokens the model received with the last request, and produced">
      Context {input.toLocaleString()} tok
      {output !== null ? <span className="muted"> · ↓{output.toLocaleString()}</span> : null}
    </span>
  );
}

export function ChatPage({ source }: { source: string }) {
  const chat = useChat(source);
  const inbox = useInbox();
  const { state } = chat;
  const endRef = useRef<HTMLLIElement>(null);

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: "end" });
  }, [state.items]);

  const runCommand = async (text: string): Promise<boolean> => {
    const cmd = parseSlash(text);
    if (!cmd) return true;
    const known = SLASH_COMMANDS.find((c) => c.name === cmd.name);
    if (!known) {
      chat.notice("warn", `Unknown command /${cmd.name}. Commands: ${SLASH_COMMANDS.map((c) => `/${c.name}`).join(" ")}`);
      return true;
    }
    if (cmd.name === "new") await chat.newSession();
    else if (cmd.name === "stop") await chat.stop();
    else chat.notice("info", `/${cmd.name} is not available yet in this build.`);
    return true;
  };

  const submit = async (text: string): Promise<boolean> => {
    if (text.startsWith("/")) return runCommand(text);
    try {
      await chat.send(text);
      return true;
    } catch (e) {
      chat.notice("error", `Not sent: ${(e as { message?: string }).message ?? "unknown error"}`);
      return false;
    }
  };

  let body;
  if (chat.status === "loading") {
    body = <Loading label="Loading the conversation…" />;
  } else if (chat.status === "error") {
    body = <ErrorView title="Could not open the chat" error={chat.error} onRetry={chat.retry} />;
  } else if (state.items.length === 0) {
    body = (
      <div className="chat-empty state state-empty">
        <p className="state-title">No messages yet</p>
        <p className="state-body">Write below to start. Type / for commands.</p>
      </div>
    );
  } else {
    body = null;
  }

  return (
    <section className="page page-chat" aria-labelledby="page-title">
      <header className="page-header page-header-row chat-header">
        <h1 id="page-title">Chat</h1>
        <span className="muted">
          Conversation of the “{source}” source
          {state.sessionId !== null ? (
            <>
              {" · "}
              <a href={`#session/${state.sessionId}`}>session #{state.sessionId}</a>
            </>
          ) : null}
        </span>
        <span className="chat-header-end">
          {state.running ? (
            <span className="status status-running" role="status">
              working…
            </span>
          ) : null}
          <ContextMeter input={state.inputTokens} output={state.outputTokens} />
        </span>
      </header>
      <div className="chat-scroll">
        {body}
        <ol className="chat-log" aria-label="Conversation" aria-live="polite">
          {state.items.map((item) => (
            <Item key={item.key} item={item} inbox={inbox.data?.items ?? []} />
          ))}
          <li ref={endRef} aria-hidden="true" className="chat-end" />
        </ol>
      </div>
      <Composer
        running={state.running}
        disabled={chat.status !== "ready"}
        onSubmit={submit}
        onStop={() => void chat.stop()}
      />
    </section>
  );
}
