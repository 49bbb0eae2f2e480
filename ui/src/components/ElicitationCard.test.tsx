import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { ElicitationItem } from "../backend/bindings";
import { ElicitationCard } from "./ElicitationCard";

function item(over: Partial<ElicitationItem> = {}): ElicitationItem {
  return {
    elicitation_id: 5,
    tool_call_id: 42,
    session_id: 7,
    source: "app",
    server: "everything",
    created_at: "2026-12-05T12:00:00Z",
    age_secs: 3,
    form: {
      message: "Log in to the test service",
      fields: [
        { name: "user", title: "User", description: null, kind: "text", format: null, min_length: null, max_length: null, required: true, sensitive: false, default: "ada" },
        { name: "password", title: "Password", description: null, kind: "text", format: null, min_length: null, max_length: null, required: true, sensitive: true, default: null },
        { name: "age", title: "Age", description: "in years", kind: "number", integer: true, minimum: 0, maximum: 150, required: false, sensitive: false, default: null },
        { name: "agree", title: "Agree", description: null, kind: "boolean", required: false, sensitive: false, default: null },
        { name: "pet", title: "Pet", description: null, kind: "choice", options: ["pet-1", "pet-2"], labels: ["Cats", "Dogs"], required: false, sensitive: false, default: "pet-1" },
        { name: "tools", title: "Tools", description: null, kind: "multi_choice", options: ["g", "p"], labels: ["Guitar", "Piano"], min_items: null, max_items: null, required: false, sensitive: false, default: null },
      ],
    },
    ...over,
  };
}

describe("elicitation card", () => {
  it("builds the form from the fields, masks the secret and sends typed values", async () => {
    const user = userEvent.setup();
    const onAnswer = vi.fn(() => Promise.resolve({ delivered: true }));
    render(<ElicitationCard item={item()} onAnswer={onAnswer} />);
    expect(screen.getByText("Log in to the test service")).toBeTruthy();
    expect((screen.getByLabelText("User (required)") as HTMLInputElement).value).toBe("ada");
    const password = screen.getByLabelText("Password (required)") as HTMLInputElement;
    expect(password.type).toBe("password");
    await user.type(password, "hunter2");
    await user.type(screen.getByLabelText("Age"), "36");
    await user.click(screen.getByLabelText("Agree"));
    await user.selectOptions(screen.getByLabelText("Pet"), "Dogs");
    await user.click(screen.getByLabelText("Piano"));
    await user.click(screen.getByRole("button", { name: "Submit" }));
    expect(onAnswer).toHaveBeenCalledWith(5, "accept", { user: "ada", password: "hunter2", age: 36, agree: true, pet: "pet-2", tools: ["p"] });
    expect(screen.getByRole("status").textContent).toContain("Sent (accept)");
    // The typed secret does not stay in the page once sent.
    expect((screen.getByLabelText("Password (required)") as HTMLInputElement).value).toBe("");
  });

  it("declines or cancels without sending values, and a form without fields is a yes/no", async () => {
    const user = userEvent.setup();
    const onAnswer = vi.fn(() => Promise.resolve({ delivered: true }));
    const { unmount } = render(<ElicitationCard item={item()} onAnswer={onAnswer} />);
    await user.click(screen.getByRole("button", { name: "Decline" }));
    expect(onAnswer).toHaveBeenLastCalledWith(5, "decline", null);
    unmount();
    render(<ElicitationCard item={item({ form: { message: "Proceed?", fields: [] } })} onAnswer={onAnswer} />);
    expect(screen.getByRole("button", { name: "No" })).toBeTruthy();
    await user.click(screen.getByRole("button", { name: "Cancel" }));
    expect(onAnswer).toHaveBeenLastCalledWith(5, "cancel", null);
  });

  it("shows the server's refusal and keeps the form", async () => {
    const user = userEvent.setup();
    const onAnswer = vi.fn(() => Promise.reject({ code: "invalid_input", message: "`age` is out of range" }));
    render(<ElicitationCard item={item()} onAnswer={onAnswer} />);
    await user.type(screen.getByLabelText("Password (required)"), "x");
    await user.click(screen.getByRole("button", { name: "Submit" }));
    expect(screen.getByRole("alert").textContent).toContain("`age` is out of range");
    expect(screen.getByRole("button", { name: "Submit" })).toHaveProperty("disabled", false);
  });
});
