import { useEffect, useMemo, useState } from "preact/hooks";

type Notes = typeof import("../lib/notes");

// markdown-it and its companions are a third of the first screen's script: loaded apart, once,
// when notes are asked for (in step with reading them: PackageFiles, UpdateDialog), so the
// screens that show none do not hold it.
let loaded: Notes | null = null;
let loading: Promise<Notes> | null = null;

/** Loads the Markdown renderer (once; a failed load is tried again at the next call). */
function loadNotes(): Promise<Notes> {
  loading ??= import("../lib/notes").then(
    (m) => (loaded = m),
    (e: unknown) => {
      loading = null;
      throw e;
    },
  );
  return loading;
}

/** Starts loading the Markdown renderer ahead of notes about to be shown (a failure is met by them). */
export function prepareNotes(): void {
  void loadNotes().catch(() => undefined);
}

/**
 * Release notes rendered safely: Markdown (or plain text in a <pre>). Links (web and mail only)
 * are shown but cannot be followed inside the app's window: they have no href; their target is
 * in the tooltip. Images are not rendered, so nothing is fetched from elsewhere. Until the
 * renderer is loaded a line says so; should it fail to load, the notes are shown as plain text.
 */
export function Markdown({ text, plain }: { text: string; plain?: boolean }) {
  const [notes, setNotes] = useState<Notes | null>(loaded);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (plain || notes) return;
    let live = true;
    loadNotes().then(
      (m) => live && setNotes(m),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [plain, notes]);
  const html = useMemo(() => (plain || !notes ? null : notes.renderNotes(text)), [text, plain, notes]);
  if (plain || failed)
    return (
      <pre class="notes-plain" data-testid="release-notes-text">
        {text}
      </pre>
    );
  if (html === null)
    return (
      <p class="muted" aria-busy="true">
        Showing the notes…
      </p>
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
