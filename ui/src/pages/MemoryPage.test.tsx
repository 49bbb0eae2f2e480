import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { MockBackend } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

/** A backend where agent `main` created notes.md in session 7 and the person has prefs.md. */
function backendWithMemory() {
  const backend = new MockBackend();
  backend.memory.write("prefs.md", "tabs\n", null);
  backend.memory.write("notes.md", "The cat is Miso.\n", { agentId: "main", sessionId: 7, callId: 70 });
  return backend;
}

const edit = (id: number) => document.querySelector(`[data-edit-id="${id}"]`) as HTMLElement;

describe("Memory page", () => {
  it("lists the files and every recorded edit with its author, diff and session", async () => {
    renderApp(backendWithMemory(), "#memory");
    const files = await screen.findByRole("navigation", { name: "Memory files" });
    const links = (await within(files).findAllByRole("link")).map((a) => a.textContent);
    expect(links).toEqual(["notes.md17 B", "prefs.md5 B"]);
    expect(await screen.findByRole("heading", { name: "Edits of every file" })).toBeTruthy();
    const agentEdit = edit(2);
    expect(agentEdit.textContent).toContain("notes.md created by agent main in session 7");
    expect(within(agentEdit).getByRole("link", { name: "session 7" }).getAttribute("href")).toBe("#session/7?call=70");
    expect(within(agentEdit).getByText("The cat is Miso.")).toBeTruthy();
    expect(edit(1).textContent).toContain("prefs.md created by you");
  });

  it("shows an agent's write while the page is open, from its file_changed event", async () => {
    const backend = backendWithMemory();
    renderApp(backend, "#memory?file=notes.md");
    const text = (await screen.findByLabelText("Content of notes.md")) as HTMLTextAreaElement;
    expect(text.value).toBe("The cat is Miso.\n");
    const written = backend.memory.write("notes.md", "The cat is Miso.\nShe is a tabby.\n", { agentId: "main", sessionId: 8, callId: 80 });
    act(() =>
      backend.emit({
        session_id: 8,
        source: "web",
        frame: null,
        seq: 1,
        event: { type: "file_changed", path: "/data/memory/notes.md", tool_call_id: 80, diff: written.diff },
      }),
    );
    await waitFor(() => expect(text.value).toBe("The cat is Miso.\nShe is a tabby.\n"));
    expect(await within(await waitFor(() => edit(written.id))).findByText("She is a tabby.")).toBeTruthy();
  });

  it("says what the page is for when there is no file", async () => {
    renderApp(new MockBackend(), "#memory");
    expect(await screen.findByText("No memory files yet")).toBeTruthy();
    expect(await screen.findByText("No recorded edits")).toBeTruthy();
  });

  it("undoes an agent's edit, and then the file it created is gone", async () => {
    const user = userEvent.setup();
    const backend = backendWithMemory();
    renderApp(backend, "#memory?file=notes.md");
    expect(await screen.findByRole("heading", { name: "Edits of notes.md" })).toBeTruthy();
    expect((await screen.findByLabelText("Content of notes.md") as HTMLTextAreaElement).value).toBe("The cat is Miso.\n");
    await user.click(await screen.findByRole("button", { name: "Undo edit 2 of notes.md" }));
    expect(backend.memory.files.has("notes.md")).toBe(false);
    expect(await screen.findByText("notes.md does not exist")).toBeTruthy();
    await waitFor(() => expect(within(edit(2)).getByText("undone")).toBeTruthy());
    expect((within(edit(2)).getByRole("button", { name: "Undo edit 2 of notes.md" }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("refuses an undo once the file changed, saying why and keeping the change", async () => {
    const user = userEvent.setup();
    const backend = backendWithMemory();
    renderApp(backend, "#memory?file=notes.md");
    const text = (await screen.findByLabelText("Content of notes.md")) as HTMLTextAreaElement;
    await user.clear(text);
    await user.type(text, "The cat is Miso, a tabby.");
    await user.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("Saved.")).toBeTruthy();
    expect(backend.memory.files.get("notes.md")).toBe("The cat is Miso, a tabby.");
    await user.click(await screen.findByRole("button", { name: "Undo edit 2 of notes.md" }));
    const alert = await within(edit(2)).findByRole("alert");
    expect(alert.textContent).toContain("notes.md changed since this edit");
    expect(backend.memory.files.get("notes.md")).toBe("The cat is Miso, a tabby.");
  });

  it("will not save past the size limit and creates a new file", async () => {
    const user = userEvent.setup();
    const backend = backendWithMemory();
    backend.memory.maxBytes = 10;
    renderApp(backend, "#memory?file=prefs.md");
    const text = (await screen.findByLabelText("Content of prefs.md")) as HTMLTextAreaElement;
    await user.type(text, "and more than ten bytes");
    expect(screen.getByText(/of 10 bytes/).className).toContain("form-error");
    expect((screen.getByRole("button", { name: "Save" }) as HTMLButtonElement).disabled).toBe(true);

    await user.type(screen.getByLabelText("New file"), "../escape.md");
    await user.click(screen.getByRole("button", { name: "Create" }));
    expect((await screen.findByRole("alert")).textContent).toContain("is not a memory file path");
    await user.clear(screen.getByLabelText("New file"));
    await user.type(screen.getByLabelText("New file"), "ideas.md");
    await user.click(screen.getByRole("button", { name: "Create" }));
    expect(await screen.findByLabelText("Content of ideas.md")).toBeTruthy();
    expect(window.location.hash).toBe("#memory?file=ideas.md");
    expect(backend.memory.files.get("ideas.md")).toBe("");
  });
});
