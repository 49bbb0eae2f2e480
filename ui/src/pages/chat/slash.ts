// The built-in slash commands the composer offers, and how typed text maps onto them.
export type SlashCommand = { name: string; args?: string; description: string; available: boolean };

export const SLASH_COMMANDS: SlashCommand[] = [
  { name: "new", description: "Start a new session for this source", available: true },
  { name: "stop", description: "Stop the running turn and drop queued messages", available: true },
  { name: "compact", args: "[focus]", description: "Summarise older messages to free context", available: true },
  { name: "resettools", description: "Revoke the tool groups activated in this session", available: true },
  { name: "context", description: "Show the last request's size against the model's window", available: true },
  { name: "cost", description: "Show what this session has cost", available: true },
  { name: "sethome", description: "Make this chat the home of briefings from jobs and ticks", available: true },
];

/** Commands offered while the composer holds just `/prefix` (no space yet). */
export function slashMatches(text: string): SlashCommand[] {
  const m = /^\/(\S*)$/.exec(text);
  if (!m) return [];
  const prefix = (m[1] as string).toLowerCase();
  return SLASH_COMMANDS.filter((c) => c.name.startsWith(prefix));
}

export function parseSlash(text: string): { name: string; args: string } | null {
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: (m[1] as string).toLowerCase(), args: (m[2] ?? "").trim() } : null;
}
