import { describe, expect, it } from "vitest";
import { isMarkdown, renderNotes } from "./notes";

describe("renderNotes", () => {
  it("renders headings and lists", () => {
    const out = renderNotes("# 2.1.0\n\n- fixes the modem\n- faster boot");
    expect(out).toContain("<h1>2.1.0</h1>");
    expect(out).toContain("<li>fixes the modem</li>");
  });
  it("never lets raw HTML, scripts, images or javascript links through", () => {
    const out = renderNotes(
      '<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n![p](http://tracker/p.png)\n\n[x](javascript:alert(1))',
    );
    expect(out).not.toContain("<script");
    expect(out).not.toContain("<img");
    expect(out).not.toContain('href="javascript:');
    expect(out).toContain("&lt;script&gt;");
  });
});

describe("isMarkdown", () => {
  it("goes by content type, then by extension", () => {
    expect(isMarkdown("text/markdown; charset=utf-8", null)).toBe(true);
    expect(isMarkdown(null, "NOTES.MD")).toBe(true);
    expect(isMarkdown("text/plain", "notes.txt")).toBe(false);
  });
});
