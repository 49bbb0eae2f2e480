// #chat/{source}: placeholder until the engine's chat API exists; says so plainly.
import { EmptyPage } from "../components/StatusViews";

export function ChatPage({ source }: { source: string }) {
  return (
    <EmptyPage
      title="Chat"
      lead={`Chatting is not available yet in this build. This page will hold the conversation for the “${source}” source.`}
    >
      <ul className="placeholder-list">
        <li>The message list with tool cards, sub-agent lanes and live streamed tokens.</li>
        <li>A composer with model choice, attachments, send and stop, and slash commands.</li>
        <li>Approval and clarification prompts inline, as the agent asks for them.</li>
      </ul>
      <p className="muted">
        Stored conversations can already be read under <a href="#sessions">Sessions</a>.
      </p>
    </EmptyPage>
  );
}
