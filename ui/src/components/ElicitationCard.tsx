// A question an MCP server asks during a call (`elicitation/create`): its message and a form
// built from the fields it asks for (text, number, yes/no, one or some of a list). A secret is
// typed masked and leaves this page only in the answer (Skald never stores it). Submit, decline
// or cancel.
import { useId, useState } from "react";
import type { ElicitationAction, ElicitationField, ElicitationItem } from "../backend/bindings";
import { toApiError, type ApiError } from "../backend";
import { Visible, visibleString } from "./visible";

type Values = Record<string, unknown>;

/** What a text input of `format` is (an HTML input type). */
function inputType(field: ElicitationField): string {
  if (field.sensitive) return "password";
  if (field.kind !== "text") return "text";
  switch (field.format) {
    case "email":
      return "email";
    case "uri":
      return "url";
    case "date":
      return "date";
    case "date-time":
      return "datetime-local";
    default:
      return "text";
  }
}

/** The values the form starts with: each field's default (a secret has none). */
function initialValues(fields: ElicitationField[]): Values {
  const values: Values = {};
  for (const f of fields) {
    if (f.default !== null && f.default !== undefined) values[f.name] = f.default;
    else if (f.kind === "boolean") values[f.name] = false;
    else if (f.kind === "multi_choice") values[f.name] = [];
  }
  return values;
}

/** The answer as the server reads it: empty optional fields left out, numbers as numbers. */
function answerOf(fields: ElicitationField[], values: Values): Values {
  const out: Values = {};
  for (const f of fields) {
    const v = values[f.name];
    if (v === undefined || v === "") continue;
    out[f.name] = f.kind === "number" && typeof v === "string" ? Number(v) : v;
  }
  return out;
}

function Field({ field, value, onChange, disabled }: { field: ElicitationField; value: unknown; onChange: (v: unknown) => void; disabled: boolean }) {
  const id = useId();
  const label = (
    <label htmlFor={id}>
      <Visible text={field.title ?? field.name} mode="line" />
      {field.required ? " (required)" : ""}
    </label>
  );
  const hint = field.description ? (
    <span className="muted elicitation-hint">
      <Visible text={field.description} mode="line" />
    </span>
  ) : null;
  switch (field.kind) {
    case "boolean":
      return (
        <div className="field elicitation-field">
          <label>
            <input type="checkbox" checked={value === true} disabled={disabled} onChange={(e) => onChange(e.target.checked)} />{" "}
            <Visible text={field.title ?? field.name} mode="line" />
          </label>
          {hint}
        </div>
      );
    case "choice":
      return (
        <div className="field elicitation-field">
          {label}
          <select id={id} value={typeof value === "string" ? value : ""} disabled={disabled} required={field.required} onChange={(e) => onChange(e.target.value)}>
            <option value="">—</option>
            {field.options.map((o, i) => (
              <option key={o} value={o}>
                {visibleString(field.labels[i] ?? o)}
              </option>
            ))}
          </select>
          {hint}
        </div>
      );
    case "multi_choice": {
      const picked = Array.isArray(value) ? (value as string[]) : [];
      return (
        <fieldset className="field elicitation-field">
          <legend>
            <Visible text={field.title ?? field.name} mode="line" />
            {field.required ? " (required)" : ""}
          </legend>
          {field.options.map((o, i) => (
            <label key={o}>
              <input
                type="checkbox"
                checked={picked.includes(o)}
                disabled={disabled}
                onChange={(e) => onChange(e.target.checked ? [...picked, o] : picked.filter((p) => p !== o))}
              />{" "}
              <Visible text={field.labels[i] ?? o} mode="line" />
            </label>
          ))}
          {hint}
        </fieldset>
      );
    }
    case "number":
      return (
        <div className="field elicitation-field">
          {label}
          <input
            id={id}
            type="number"
            step={field.integer ? 1 : "any"}
            min={field.minimum ?? undefined}
            max={field.maximum ?? undefined}
            required={field.required}
            disabled={disabled}
            value={typeof value === "number" || typeof value === "string" ? value : ""}
            onChange={(e) => onChange(e.target.value)}
          />
          {hint}
        </div>
      );
    case "text":
      return (
        <div className="field elicitation-field">
          {label}
          <input
            id={id}
            type={inputType(field)}
            autoComplete={field.sensitive ? "off" : undefined}
            required={field.required}
            disabled={disabled}
            value={typeof value === "string" ? value : ""}
            onChange={(e) => onChange(e.target.value)}
          />
          {hint}
        </div>
      );
  }
}

export function ElicitationCard({
  item,
  onAnswer,
}: {
  item: ElicitationItem;
  onAnswer: (id: number, action: ElicitationAction, content: Values | null) => Promise<unknown>;
}) {
  const { fields } = item.form;
  const [values, setValues] = useState<Values>(() => initialValues(fields));
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<ElicitationAction | null>(null);
  const [error, setError] = useState<ApiError | null>(null);

  const send = async (action: ElicitationAction) => {
    setBusy(true);
    setError(null);
    try {
      await onAnswer(item.elicitation_id, action, action === "accept" ? answerOf(fields, values) : null);
      // The card goes away when the engine reports elicitation_resolved.
      setSent(action);
      // Typed secrets are not kept once sent.
      setValues(initialValues(fields));
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setBusy(false);
    }
  };
  const done = sent !== null;

  return (
    <section className="question-card elicitation-card" aria-label={`Question from the MCP server ${visibleString(item.server)}`} data-elicitation-id={item.elicitation_id}>
      <h3 className="approval-title">
        <Visible text={item.server} mode="line" /> asks
      </h3>
      <p className="elicitation-message">
        <Visible text={item.form.message} />
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void send("accept");
        }}
      >
        {fields.map((f) => (
          <Field key={f.name} field={f} value={values[f.name]} disabled={done || busy} onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))} />
        ))}
        <div className="approval-actions">
          <button type="submit" className="button button-primary" disabled={busy || done}>
            {fields.length === 0 ? "Yes" : "Submit"}
          </button>
          <button type="button" className="button" disabled={busy || done} onClick={() => void send("decline")}>
            {fields.length === 0 ? "No" : "Decline"}
          </button>
          <button type="button" className="button button-ghost" disabled={busy || done} onClick={() => void send("cancel")}>
            Cancel
          </button>
          {done ? (
            <span className="muted" role="status">
              Sent ({sent}), waiting for the server…
            </span>
          ) : null}
        </div>
      </form>
      {error ? (
        <p className="form-error" role="alert">
          Could not send the answer: {error.message}
        </p>
      ) : null}
    </section>
  );
}
