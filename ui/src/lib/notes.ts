import MarkdownIt from "markdown-it";

// Raw HTML off (markdown-it escapes it), no images (nothing is fetched from elsewhere).
const md = new MarkdownIt({ html: false, linkify: false, typographer: false }).disable("image");

// Release notes come from the service: a link may only point to the web or to mail. Anything
// else (javascript:, data:, file:, ipc:, tauri:, asset:, relative paths that would resolve
// inside the app) is not a link at all and stays as the text that was written.
const SAFE_LINK = /^(https?:\/\/|mailto:)/i;
md.validateLink = (url: string) => SAFE_LINK.test(url.trim());

// A link is shown, never followed inside the app's window by any means (click, middle click,
// keyboard, context menu, drag): it has no href; its target is in the tooltip.
md.renderer.rules.link_open = (tokens, idx) => {
  const href = tokens[idx].attrGet("href") ?? "";
  return `<a class="notes-link" title="${md.utils.escapeHtml(href)}">`;
};

/** Release notes as safe HTML. */
export function renderNotes(text: string): string {
  return md.render(text);
}
