// What a message says in the transcript: a person's words as they typed them; an agent's reply as
// Markdown, under its thinking (collapsed). The reply streaming in is drawn the same way.

import type { Message } from "../types";
import { Markdown } from "./Markdown";
import { Thinking } from "./Thinking";

export function MessageText({ message }: { message: Message }) {
  if (message.role !== "assistant") {
    return message.content ? <div className="message-text">{message.content}</div> : null;
  }
  return (
    <>
      {message.thinking && <Thinking text={message.thinking} />}
      {message.content && (
        <div className="message-text message-markdown" data-testid="reply-text">
          <Markdown text={message.content} />
        </div>
      )}
    </>
  );
}

/** The answer as it streams: its thinking ("Thinking…" until the answer starts), then the text. */
export function StreamingReply({ text, thinking }: { text: string; thinking: string }) {
  if (!text && !thinking.trim()) return null;
  return (
    <div className="message message-assistant streaming" data-testid="streaming">
      <Thinking text={thinking} live={!text} />
      {text && (
        <div className="message-text message-markdown" data-testid="streaming-text">
          <Markdown text={text} />
        </div>
      )}
    </div>
  );
}
