/** Whether release notes of this type and name are Markdown (else shown as plain text). */
export function isMarkdown(contentType: string | null, fileName: string | null): boolean {
  if (contentType?.startsWith("text/markdown")) return true;
  return /\.(md|markdown)$/i.test(fileName ?? "");
}
