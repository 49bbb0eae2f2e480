// The media files and resource links an MCP call returned: an image as an image, audio as a
// player, any other file as a line naming its type, size and where it was saved; links listed.
//
// Bytes come from the `tool_media` op (by call and index, never by path). Only the raster image
// and audio types below are rendered, each from a `data:` URL whose type is our own constant, not
// the server's string. SVG is never rendered, not even through <img> (where its scripts would not
// run): it is markup a server wrote, and a file line loses nothing a person needs.
import { useQuery } from "@tanstack/react-query";
import { useBackend } from "../backend";
import type { ApiError, MediaFile, ToolMedia, ToolResultMedia } from "../backend";
import { Visible } from "./visible";

/** Raster image types shown inline as <img>. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"]);
/** Audio types given an <audio controls> player. */
const AUDIO_TYPES = new Set([
  "audio/wav",
  "audio/x-wav",
  "audio/wave",
  "audio/mpeg",
  "audio/mp3",
  "audio/ogg",
  "audio/webm",
  "audio/flac",
  "audio/aac",
  "audio/mp4",
]);

/** How a media file is shown: by its declared type only (lower-cased, parameters dropped). */
export function mediaDisplay(mime: string | null): { as: "image" | "audio" | "file"; mime: string } {
  const base = (mime ?? "").split(";", 1).join("").trim().toLowerCase();
  if (IMAGE_TYPES.has(base)) return { as: "image", mime: base };
  if (AUDIO_TYPES.has(base)) return { as: "audio", mime: base };
  return { as: "file", mime: base };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** "server/tool" of an `mcp__server__tool` name, else the name. */
function toolTitle(name: string): string {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  return m ? `${m[1]}/${m[2]}` : name;
}

/** The bytes of file `index` of call `toolCallId`, read once and kept. */
function useMediaFile(toolCallId: number, index: number, enabled: boolean) {
  const backend = useBackend();
  return useQuery<MediaFile, ApiError>({
    queryKey: ["tool_media", toolCallId, index],
    queryFn: () => backend.tool_media({ tool_call_id: toolCallId, index }),
    enabled,
    staleTime: Infinity,
    retry: false,
  });
}

/** "image 2: image/svg+xml, 1.2 KB, saved at /…/mcp-results/…": what a file not shown is. */
function FileLineText({ item, number }: { item: ToolMedia; number: number }) {
  const where = item.saved_path ? `saved at ${item.saved_path}` : "not saved";
  return <Visible text={`${item.kind} ${number}: ${item.mime ?? "unknown type"}, ${formatBytes(item.byte_size)}, ${where}`} mode="line" />;
}

function FileLine({ item, number }: { item: ToolMedia; number: number }) {
  return (
    <li className="tool-media-file">
      <FileLineText item={item} number={number} />
    </li>
  );
}

function Shown({ toolCallId, index, item, alt }: { toolCallId: number; index: number; item: ToolMedia; alt: string }) {
  const display = mediaDisplay(item.mime);
  const file = useMediaFile(toolCallId, index, item.file_name !== null);
  if (file.isError) {
    return (
      <li className="tool-media-file">
        <FileLineText item={item} number={index + 1} />
        <span className="tool-media-error">
          {" "}
          — <Visible text={file.error.message} mode="line" />
        </span>
      </li>
    );
  }
  if (!file.data) return <li className="tool-media-loading muted">Loading {item.kind} {index + 1}…</li>;
  // The type in the URL is the allow-listed constant; the bytes are base64 from the engine.
  const src = `data:${display.mime};base64,${file.data.base64}`;
  return (
    <li className={`tool-media-${display.as}`}>
      {display.as === "image" ? (
        <img className="tool-media-img" src={src} alt={alt} loading="lazy" decoding="async" />
      ) : (
        <audio className="tool-media-audio" controls preload="metadata" src={src} aria-label={alt} />
      )}
    </li>
  );
}

/** The media and links of call `toolCallId` (tool `name`); nothing when it returned none. */
export function ToolMediaView({ toolCallId, name, media }: { toolCallId: number; name: string; media: ToolResultMedia | null | undefined }) {
  if (!media || (media.media.length === 0 && media.links.length === 0)) return null;
  const title = toolTitle(name);
  return (
    <div className="tool-section tool-media" aria-label="Media the tool returned">
      {media.media.length > 0 ? (
        <ul className="tool-media-list">
          {media.media.map((item, i) =>
            mediaDisplay(item.mime).as === "file" || item.file_name === null ? (
              <FileLine key={i} item={item} number={i + 1} />
            ) : (
              <Shown key={i} toolCallId={toolCallId} index={i} item={item} alt={`${item.kind} ${i + 1} from ${title}`} />
            ),
          )}
        </ul>
      ) : null}
      {media.links.length > 0 ? (
        <ul className="tool-media-links" aria-label="Resource links">
          {media.links.map((link, i) => (
            <li key={i}>
              <Visible text={link.name} mode="line" /> <code>&lt;<Visible text={link.uri} mode="line" />&gt;</code>
              {link.mime ? (
                <span className="muted">
                  {" "}
                  (<Visible text={link.mime} mode="line" />)
                </span>
              ) : null}
              {link.description ? (
                <span className="muted">
                  {" "}
                  — <Visible text={link.description} mode="line" />
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
