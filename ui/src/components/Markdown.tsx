import { useMemo } from "preact/hooks";
import { renderNotes } from "../lib/notes";

/**
 * Release notes rendered safely: Markdown (or plain text in a <pre>). Links are shown but not
 * followed inside the app's window; their target is in the tooltip.
 */
export function Markdown({ text, plain }: { text: string; plain?: boolean }) {
  const html = useMemo(() => (plain ? null : renderNotes(text)), [text, plain]);
  if (html === null)
    return (
      <pre class="notes-plain" data-testid="release-notes-text">
        {text}
      </pre>
    );
  return (
    <div
      class="notes-md"
      data-testid="release-notes-text"
      onClick={(e) => {
        const a = (e.target as HTMLElement).closest("a");
        if (a) {
          e.preventDefault();
          a.title = a.getAttribute("href") ?? "";
        }
      }}
      // Safe: produced by markdown-it with raw HTML disabled.
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
