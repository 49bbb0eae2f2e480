// Characters that change how text looks without being seen — bidi controls, zero-width and other
// invisible characters, C0/C1 controls (`\r`, ESC) — shown as small marked tokens, so what a
// person approves reads as what runs. Used where commands, paths, arguments, results and diffs
// are shown; prose (answers, questions) keeps them, where they are typography.
import { Fragment, type ReactNode } from "react";

/** `multiline`: newlines and tabs stay as they are (a command, a result, a diff line).
 *  `line`: they are marked too, so a path with a newline cannot pass for two paths. */
export type RevealMode = "multiline" | "line";

/** A run of plain text, or one revealed character: its token and what it is. */
export type Piece = string | { token: string; title: string };

// Bidi controls, invisible and zero-width characters, line and paragraph separators, C0/C1
// controls and DEL, and the invisible tag characters (U+E0000–U+E007F). The combining marks
// among them (U+034F, U+17B4, U+17B5, U+180B–U+180F) open the class: after another character
// they would read as joined to it, though each is matched on its own.
const HIDDEN =
  "\\u034F\\u17B4\\u17B5\\u180B-\\u180F" +
  "\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F\\u00AD\\u061C\\u115F\\u1160" +
  "\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\u3164\\uFEFF\\uFFA0" +
  "\\uFFF9-\\uFFFB\\u{E0000}-\\u{E007F}";
const PATTERNS: Record<RevealMode, RegExp> = {
  multiline: new RegExp(`[${HIDDEN}]`, "gu"),
  line: new RegExp(`[${HIDDEN}\\t\\n]`, "gu"),
};

const BIDI: Record<number, string> = {
  0x061c: "ARABIC LETTER MARK",
  0x200e: "LEFT-TO-RIGHT MARK",
  0x200f: "RIGHT-TO-LEFT MARK",
  0x202a: "LEFT-TO-RIGHT EMBEDDING",
  0x202b: "RIGHT-TO-LEFT EMBEDDING",
  0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE",
  0x202e: "RIGHT-TO-LEFT OVERRIDE",
  0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE",
  0x2068: "FIRST STRONG ISOLATE",
  0x2069: "POP DIRECTIONAL ISOLATE",
};

const INVISIBLE: Record<number, string> = {
  0x00ad: "SOFT HYPHEN",
  0x200b: "ZERO WIDTH SPACE",
  0x200c: "ZERO WIDTH NON-JOINER",
  0x200d: "ZERO WIDTH JOINER",
  0x2028: "LINE SEPARATOR",
  0x2029: "PARAGRAPH SEPARATOR",
  0x2060: "WORD JOINER",
  0xfeff: "ZERO WIDTH NO-BREAK SPACE",
};

/** Controls with a conventional escape, and what each does where text is run or printed. */
const CONTROLS: Record<number, [string, string]> = {
  0x00: ["\\0", "NUL: ends a string for many programs"],
  0x07: ["\\a", "BEL: rings the terminal bell"],
  0x08: ["\\b", "backspace: in a terminal, moves back over the character before it"],
  0x09: ["\\t", "tab"],
  0x0a: ["\\n", "newline: the text goes on on another line"],
  0x0b: ["\\v", "vertical tab"],
  0x0c: ["\\f", "form feed"],
  0x0d: ["\\r", "carriage return: in a terminal, what follows is written over the start of the line"],
  0x1b: ["\\e", "escape: starts a terminal control sequence (colours, cursor moves, clearing a line)"],
};

const hex = (cp: number, width: number) => cp.toString(16).toUpperCase().padStart(width, "0");
const PART_OF_TEXT = "It is part of the text.";

/** The token and explanation of one hidden character. */
function reveal(ch: string): { token: string; title: string } {
  const cp = ch.codePointAt(0) ?? 0;
  const u = `U+${hex(cp, 4)}`;
  const control = CONTROLS[cp];
  if (control) return { token: control[0], title: `${u} ${control[1]}. ${PART_OF_TEXT}` };
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
    return { token: `\\x${hex(cp, 2).toLowerCase()}`, title: `${u}, a control character. ${PART_OF_TEXT}` };
  }
  const bidi = BIDI[cp];
  if (bidi) {
    return {
      token: `⟨${u}⟩`,
      title: `${u} ${bidi}: changes the order in which the text around it is displayed. ${PART_OF_TEXT}`,
    };
  }
  const name = INVISIBLE[cp];
  return {
    token: `⟨${u}⟩`,
    title: `${u}${name ? ` ${name}` : ""}: an invisible character. ${PART_OF_TEXT}`,
  };
}

/** `text` split into plain runs and revealed characters; one plain run when nothing hides. */
export function revealPieces(text: string, mode: RevealMode = "multiline"): Piece[] {
  const pattern = PATTERNS[mode];
  // `search` ignores the global pattern's lastIndex, which `matchAll` starts from.
  if (text.search(pattern) < 0) return [text];
  const pieces: Piece[] = [];
  let from = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > from) pieces.push(text.slice(from, m.index));
    pieces.push(reveal(m[0]));
    from = m.index + m[0].length;
  }
  if (from < text.length) pieces.push(text.slice(from));
  return pieces;
}

/** `text` with its hidden characters written as their tokens: for attributes and labels. */
export function visibleString(text: string, mode: RevealMode = "line"): string {
  return revealPieces(text, mode)
    .map((p) => (typeof p === "string" ? p : p.token))
    .join("");
}

/** `text` as text, each hidden character a marked token whose title says what it is. */
export function Visible({ text, mode = "multiline" }: { text: string; mode?: RevealMode }): ReactNode {
  const pieces = revealPieces(text, mode);
  if (pieces.length === 1 && typeof pieces[0] === "string") return pieces[0];
  return pieces.map((p, i) =>
    typeof p === "string" ? (
      <Fragment key={i}>{p}</Fragment>
    ) : (
      <span key={i} className="hidden-char" title={p.title}>
        {p.token}
      </span>
    ),
  );
}
