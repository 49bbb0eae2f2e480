import { QueryClient } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { BackendProvider, type ToolItem, type ToolResultMedia } from "../backend";
import { applyEvent, chatItem, emptyChat } from "../backend/chat";
import { MockBackend } from "../test/mockBackend";
import { ToolCard } from "./ToolCard";
import { mediaDisplay } from "./ToolMedia";

const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

function mcpTool(media: ToolResultMedia): ToolItem {
  return {
    kind: "tool",
    key: "tool-7",
    toolCallId: 7,
    name: "mcp__everything__get-tiny-image",
    label: "mcp__everything__get-tiny-image",
    arguments: {},
    status: "done",
    result: "[image 1: image/png, about 70 bytes, not shown to the model]",
    resultType: "string",
    error: null,
    approval: null,
    question: null,
    diff: null,
    media,
    depth: 0,
    truncated: false,
    resultChars: 60,
  };
}

function file(mime: string | null, kind: "image" | "audio" | "data" = "image", size = 70) {
  return { kind, mime, file_name: `1-7-20261205T160000.000-1.bin`, saved_path: `/data/mcp-results/1-7-20261205T160000.000-1.bin`, byte_size: size };
}

function renderCard(backend: MockBackend, tool: ToolItem) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <BackendProvider backend={backend} queryClient={client}>
      <ToolCard tool={tool} />
    </BackendProvider>,
  );
}

describe("media on a tool card", () => {
  it("shows an image as an <img> from the bytes the op reads by call and index", async () => {
    const backend = new MockBackend();
    backend.mediaFiles.set("7:0", { kind: "image", mime: "image/png", byte_size: 70, base64: PNG_BASE64 });
    renderCard(backend, mcpTool({ media: [file("image/png")], links: [] }));
    const img = await screen.findByRole("img", { name: "image 1 from everything/get-tiny-image" });
    expect(img.getAttribute("src")).toBe(`data:image/png;base64,${PNG_BASE64}`);
    expect(img.getAttribute("loading")).toBe("lazy");
    expect(backend.mediaCalls).toEqual([{ tool_call_id: 7, index: 0 }]);
  });

  it("shows an unknown type and SVG as file lines, never reading their bytes", () => {
    const backend = new MockBackend();
    renderCard(backend, mcpTool({ media: [file("application/x-thing", "data", 3072), file("image/svg+xml")], links: [] }));
    expect(screen.queryByRole("img")).toBeNull();
    expect(screen.getByText("data 1: application/x-thing, 3.0 KB, saved at /data/mcp-results/1-7-20261205T160000.000-1.bin")).toBeTruthy();
    expect(screen.getByText(/^image 2: image\/svg\+xml, 70 B, saved at /)).toBeTruthy();
    expect(backend.mediaCalls).toEqual([]);
  });

  it("gives audio a player and lists resource links as text", async () => {
    const backend = new MockBackend();
    backend.mediaFiles.set("7:0", { kind: "audio", mime: "audio/wav", byte_size: 4, base64: "UklGRg==" });
    const links = [{ name: "Text Resource 2", uri: "javascript:alert(1)", mime: "text/plain", description: "plaintext resource" }];
    const { container } = renderCard(backend, mcpTool({ media: [file("audio/wav", "audio", 4)], links }));
    await screen.findByLabelText("audio 1 from everything/get-tiny-image");
    const audio = container.querySelector("audio");
    expect(audio?.hasAttribute("controls")).toBe(true);
    expect(audio?.getAttribute("src")).toBe("data:audio/wav;base64,UklGRg==");
    const list = screen.getByRole("list", { name: "Resource links" });
    expect(list.textContent).toBe("Text Resource 2 <javascript:alert(1)> (text/plain) — plaintext resource");
    expect(list.querySelector("a")).toBeNull();
  });

  it("names the file and why when its bytes cannot be read", async () => {
    const backend = new MockBackend();
    renderCard(backend, mcpTool({ media: [file("image/png")], links: [] }));
    expect(await screen.findByText(/has no media file 0/)).toBeTruthy();
    expect(screen.getByText(/^image 1: image\/png, 70 B, saved at /)).toBeTruthy();
  });

  it("decides what it renders from the declared type alone", () => {
    expect(mediaDisplay("IMAGE/PNG; charset=x")).toEqual({ as: "image", mime: "image/png" });
    expect(mediaDisplay("text/html")).toEqual({ as: "file", mime: "text/html" });
    expect(mediaDisplay("image/svg+xml").as).toBe("file");
    expect(mediaDisplay(null).as).toBe("file");
  });
});

describe("media in the chat's state", () => {
  it("comes with the live tool_done and with a row read from the tree", () => {
    const media: ToolResultMedia = { media: [file("image/png")], links: [] };
    const args = {};
    let state = applyEvent(emptyChat(1, true), { type: "tool_start", tool_call_id: 7, message_id: 2, name: "mcp__everything__get-tiny-image", arguments: args, label_short: "x", label_full: "x", path: null });
    state = applyEvent(state, { type: "tool_done", tool_call_id: 7, result: "[image 1: saved at /etc/passwd]", result_type: "string", media });
    const live = state.items.find((i) => i.kind === "tool");
    expect(live?.kind === "tool" ? live.media : null).toEqual(media);
    const row = chatItem({
      kind: "tool", tool_call_id: 7, message_id: 2, name: "mcp__everything__get-tiny-image", label: "x", arguments: args, status: "done",
      result: "ok", diff: null, media, stack_id: 1, depth: 0, created_at: "2026-12-05T16:00:00Z", result_chars: 2, truncated: false,
    });
    expect(row?.kind === "tool" ? row.media : null).toEqual(media);
  });
});
