import { describe, expect, it } from "vitest";
import { agentLabel } from "./labels";

// The same cases as the engine's `agent_label` test: a label reads the same wherever it is built.
describe("agentLabel", () => {
  it("is the name and the number", () => {
    expect(agentLabel("scout", 2)).toBe("scout#2");
    expect(agentLabel("scout", 1_234_567_890_123)).toBe("scout#1234567890123");
    expect(agentLabel("späher", 9)).toBe("späher#9");
  });

  it("shows a hostile name escaped and cuts a long one", () => {
    expect(agentLabel("evil\u001b]0;pwned\u0007\u202ex\u200b\ny", 3)).toBe(
      "evil\\u{1b}]0;pwned\\u{7}\\u{202e}x\\u{200b}\\u{a}y#3",
    );
    expect(agentLabel("a>b", 4)).toBe("a\\u{3e}b#4");
    expect(agentLabel("a".repeat(10_000), 7)).toBe(`${"a".repeat(48)}…#7`);
    // Counted in characters, not UTF-16 units: an emoji is one.
    expect(agentLabel("🦊".repeat(49), 1)).toBe(`${"🦊".repeat(48)}…#1`);
  });
});
