// The model's reasoning above its answer: collapsed to one line ("Thinking…" while it streams,
// "Thought for N words" once stored), the text itself when opened. Shown as plain text.

import "../markdown.css";

export function wordCount(text: string): number {
  const trimmed = text.trim();
  return trimmed ? trimmed.split(/\s+/).length : 0;
}

export function Thinking({ text, live = false }: { text: string; live?: boolean }) {
  if (!text.trim()) return null;
  const words = wordCount(text);
  return (
    <details className={`thinking${live ? " live" : ""}`} data-testid="thinking" data-live={live}>
      <summary data-testid="thinking-summary">{live ? "Thinking…" : `Thought for ${words} word${words === 1 ? "" : "s"}`}</summary>
      <div className="thinking-text" data-testid="thinking-text">
        {text}
      </div>
    </details>
  );
}
