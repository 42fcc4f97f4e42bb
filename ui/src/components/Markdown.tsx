import { useMemo } from "preact/hooks";
import { renderNotes } from "../lib/notes";

/**
 * Release notes rendered safely: Markdown (or plain text in a <pre>). Links (web and mail only)
 * are shown but cannot be followed inside the app's window: they have no href; their target is
 * in the tooltip. Images are not rendered, so nothing is fetched from elsewhere.
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
      // Safe: produced by markdown-it with raw HTML disabled, links without href (lib/notes).
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
