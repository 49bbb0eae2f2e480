// The desktop transport: every operation through the shell's one `api` command, engine events over
// one IPC channel.
import { Channel, invoke } from "@tauri-apps/api/core";
import { makeApi, type Transport } from "./api";
import type { EventEnvelope } from "./bindings";
import { isEventEnvelope, toApiError, type Backend } from "./types";

type Invoke = <T>(cmd: string, args?: Record<string, unknown>) => Promise<T>;

export function createTauriBackend(run: Invoke = invoke): Backend {
  const call: Transport = async (op, params) => {
    try {
      return await run<unknown>("api", { op, params });
    } catch (error) {
      // The command rejects with the serialised ApiError; anything else is an IPC failure.
      throw toApiError(error);
    }
  };
  return {
    kind: "tauri",
    ...makeApi(call),
    subscribe(onEvent) {
      let active = true;
      const channel = new Channel<EventEnvelope>((message) => {
        // `subscribed` says where the stream starts; a window's channel lives as long as the
        // page, so there is no reconnect to resume from it.
        if (active && isEventEnvelope(message) && message.event.type !== "subscribed") onEvent(message);
      });
      run<void>("subscribe_events", { channel, since: null }).catch((error: unknown) => {
        console.error("subscribe_events failed", toApiError(error));
      });
      // There is no unsubscribe command: the shell drops the channel once a send fails
      // or the window goes; until then we just stop forwarding.
      return () => {
        active = false;
        channel.onmessage = () => {};
      };
    },
  };
}
