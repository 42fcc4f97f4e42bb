import MarkdownIt from "markdown-it";

// Raw HTML off (markdown-it escapes it), no images (nothing is fetched from elsewhere), and
// markdown-it's own check of link targets (no javascript: or data: links).
const md = new MarkdownIt({ html: false, linkify: false, typographer: false }).disable("image");

/** Release notes as safe HTML. */
export function renderNotes(text: string): string {
  return md.render(text);
}

/** Whether release notes of this type and name are Markdown (else shown as plain text). */
export function isMarkdown(contentType: string | null, fileName: string | null): boolean {
  if (contentType?.startsWith("text/markdown")) return true;
  return /\.(md|markdown)$/i.test(fileName ?? "");
}
