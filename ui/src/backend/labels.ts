// How every surface names one run of an agent: `name#N`. Mirrors the engine's `agent_label`
// (skald-protocol, origin.rs): labels the UI builds from stored rows read exactly like those
// the engine sends live.

/** Longest agent name a label shows; past it the name is cut with `…` (the engine's `LABEL_NAME_MAX`). */
const NAME_MAX = 48;

/** Controls, bidi controls, zero-width and line-separating characters, the BOM, and `>` (the nesting separator). */
function hidesText(cp: number): boolean {
  return (
    cp <= 0x1f ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0x61c ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2069) ||
    cp === 0xfeff ||
    cp === 0x3e
  );
}

/** `name#N`: the agent's name (hidden characters shown as `\u{…}`, cut at 48 characters) and the id of its run. */
export function agentLabel(agentId: string, id: number): string {
  let name = "";
  let count = 0;
  for (const ch of agentId) {
    if (count === NAME_MAX) {
      name += "…";
      break;
    }
    const cp = ch.codePointAt(0) ?? 0;
    name += hidesText(cp) ? `\\u{${cp.toString(16)}}` : ch;
    count += 1;
  }
  return `${name}#${id}`;
}
