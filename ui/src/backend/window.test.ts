import { describe, expect, it } from "vitest";
import type { DebugMessage, SessionWindow } from "./bindings";
import { applyEvent, chatFromWindow, prependChat } from "./chat";
import { appendPage, frameBatcher, itemRef, prependPage, refKey, replaceRow, windowFrom } from "./window";

const at = "2026-11-30T10:00:00Z";
const whole = { stack_id: 1, depth: 0, created_at: at, content_chars: 0, truncated: false };
const user = (id: number, content = `question ${id}`): DebugMessage => ({ kind: "user", message_id: id, content, is_synthetic: false, failed: false, ...whole });
const answer = (id: number): DebugMessage => ({ kind: "assistant", message_id: id, content: `answer ${id}`, reasoning: null, is_synthetic: false, input_tokens: id, output_tokens: 1, cost_usd: null, ...whole });
const tool = (id: number, status: "done" | "pending" = "done"): DebugMessage => ({
  kind: "tool", tool_call_id: id, message_id: id - 1, name: "read_file", label: `read ${id}`, arguments: { path: "a" },
  status, result: status === "done" ? "ok" : null, diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, created_at: at, result_chars: 2, truncated: false,
});

function page(items: DebugMessage[], over: Partial<SessionWindow> = {}): SessionWindow {
  return {
    session: { id: 5, title: null, source: "web", agent_id: "main", is_interactive: true, is_ephemeral: false, created_at: at },
    items,
    has_more_before: false,
    has_more_after: false,
    tasks: [],
    anchor_index: null,
    pending_inputs: [],
    awaiting_human: [],
    turn_ends: [],
    ...over,
  };
}

describe("tree windows", () => {
  it("names each row by the reference the engine pages from", () => {
    expect(itemRef(user(3))).toEqual({ type: "message", id: 3 });
    expect(itemRef(tool(4))).toEqual({ type: "tool", id: 4 });
    expect(refKey({ type: "agent_end", stack_id: 2 })).toBe("agent_end-2");
  });

  it("puts an earlier page on top and a later one below, each row once", () => {
    let w = windowFrom(page([user(10), answer(11)], { has_more_before: true }));
    expect(w).toMatchObject({ hasMoreBefore: true, hasMoreAfter: false, focus: null });
    // The earlier page overlaps the loaded rows by one (a row read twice is kept once).
    w = prependPage(w, page([user(8), answer(9), user(10)], { has_more_before: false, has_more_after: true }));
    expect(w.rows.map((m) => itemRef(m))).toEqual([8, 9, 10, 11].map((id) => ({ type: "message", id })));
    expect(w.hasMoreBefore).toBe(false);
    // A later page brings new rows and fresh copies of the ones it overlaps.
    const fresh = { ...answer(11), content: "answer 11, edited" } as DebugMessage;
    w = appendPage({ ...w, hasMoreAfter: true }, page([fresh, user(12)], { has_more_before: true, has_more_after: false }));
    expect(w.rows.map((m) => (m.kind === "user" || m.kind === "assistant" ? m.content : ""))).toEqual([
      "question 8", "answer 9", "question 10", "answer 11, edited", "question 12",
    ]);
    expect(w.hasMoreAfter).toBe(false);
    expect(replaceRow(w, user(8, "whole text")).rows[0]).toMatchObject({ content: "whole text" });
  });

  it("focuses the anchor of an around window", () => {
    expect(windowFrom(page([user(1), tool(3), answer(4)], { anchor_index: 1 })).focus).toBe("tool-3");
  });
});

describe("chat windows", () => {
  it("builds the chat of a window, then grows it upwards without losing what is shown", () => {
    let chat = chatFromWindow(page([user(10), tool(12), answer(13)], { has_more_before: true, awaiting_human: [40] }), false);
    expect(chat.items.map((i) => i.key)).toEqual(["user-10", "tool-12", "msg-13"]);
    expect(chat).toMatchObject({ hasMoreBefore: true, first: { type: "message", id: 10 }, last: { type: "message", id: 13 }, awaiting: [40] });
    chat = prependChat(chat, page([user(7), answer(8), user(10)], { has_more_before: false }));
    expect(chat.items.map((i) => i.key)).toEqual(["user-7", "msg-8", "user-10", "tool-12", "msg-13"]);
    expect(chat).toMatchObject({ hasMoreBefore: false, first: { type: "message", id: 7 } });
    // A page of another session (the chat moved on meanwhile) changes nothing.
    const other = { ...page([user(1)]), session: { ...page([]).session, id: 6 } };
    expect(prependChat(chat, other)).toBe(chat);
  });

  it("highlights the item a jump landed on, or the first shown after a hidden anchor", () => {
    const synthetic: DebugMessage = { ...user(2), is_synthetic: true } as DebugMessage;
    expect(chatFromWindow(page([user(1), tool(3)], { anchor_index: 1 }), false).highlight).toBe("tool-3");
    expect(chatFromWindow(page([user(1), synthetic, answer(4)], { anchor_index: 1 }), false).highlight).toBe("msg-4");
  });

  it("leaves live rows out while a jump shows older rows, but keeps the loaded ones current", () => {
    const chat = chatFromWindow(page([user(1), tool(3, "pending")], { has_more_after: true, awaiting_human: [3] }), true);
    const added = applyEvent(chat, { type: "user_message", message_id: 90, content: "newer" });
    expect(added.items.map((i) => i.key)).toEqual(["user-1", "tool-3"]);
    const done = applyEvent(chat, { type: "tool_done", tool_call_id: 3, result: "ok", result_type: "string", media: { media: [], links: [] } });
    expect(done.items[1]).toMatchObject({ status: "done" });
    expect(done.awaiting).toEqual([]);
    // At the newest rows, live rows are appended as before.
    const attached = applyEvent({ ...chat, hasMoreAfter: false }, { type: "user_message", message_id: 90, content: "newer" });
    expect(attached.items.map((i) => i.key)).toEqual(["user-1", "tool-3", "user-90"]);
  });
});

describe("frame batching", () => {
  function harness() {
    const flushed: string[][] = [];
    const frames: Array<() => void> = [];
    const b = frameBatcher<string>(
      (batch) => flushed.push(batch),
      (e) => e.startsWith("delta"),
      (run) => frames.push(run),
      () => frames.splice(0),
    );
    return { b, flushed, frames, frame: () => frames.splice(0).forEach((run) => run()) };
  }

  it("hands every delta of a frame over at once, in order, and other events at once", () => {
    const { b, flushed, frames, frame } = harness();
    b.push("tool_start");
    expect(flushed).toEqual([["tool_start"]]);
    for (let i = 0; i < 50; i += 1) b.push(`delta ${i}`);
    // Behind a waiting delta, anything else waits too (order is kept).
    b.push("done");
    expect(flushed).toHaveLength(1);
    expect(frames).toHaveLength(1);
    frame();
    expect(flushed).toHaveLength(2);
    expect(flushed[1]).toHaveLength(51);
    expect(flushed[1]?.at(0)).toBe("delta 0");
    expect(flushed[1]?.at(-1)).toBe("done");
  });

  it("drops what waits when cancelled", () => {
    const { b, flushed, frame } = harness();
    b.push("delta a");
    b.cancel();
    frame();
    expect(flushed).toEqual([]);
  });
});
