import { describe, expect, it } from "vitest";
import { isMarkdown } from "./markdownKind";
import { renderNotes } from "./notes";

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

describe("links in release notes", () => {
  const hostile = [
    "data:image/png;base64,iVBORw0KGgo=",
    "data:text/html,<script>alert(1)</script>",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "ipc://localhost/hash_file",
    "tauri://localhost/index.html",
    "asset://localhost/etc/passwd",
    "file:///etc/passwd",
    "vbscript:msgbox",
    "/index.html",
    "//evil.example/x",
  ];
  for (const url of hostile) {
    it(`does not make a link of ${url}`, () => {
      for (const src of [`[click](${url})`, `<${url}>`, `[ref]\n\n[ref]: ${url}`]) {
        const out = renderNotes(src);
        expect(out, src).not.toMatch(/<a[\s>]/);
        expect(out, src).not.toContain("href");
      }
    });
  }
  it("shows web and mail links without an href, the target in the tooltip", () => {
    const out = renderNotes('[docs](https://example.com/a?b=1&c="x") and <mailto:ops@example.com> and [h](http://example.com)');
    expect(out).toContain('<a class="notes-link" title="https://example.com/a?b=1&amp;c=%22x%22">docs</a>');
    expect(out).toContain('title="mailto:ops@example.com"');
    expect(out).toContain('title="http://example.com"');
    expect(out).not.toContain("href");
  });
  it("loads no image from anywhere", () => {
    for (const src of ["![p](https://tracker.example/p.png)", "![p](data:image/png;base64,AAAA)", '<img src="https://tracker.example/p.png">']) {
      expect(renderNotes(src)).not.toContain("<img");
    }
  });
});

describe("isMarkdown", () => {
  it("goes by content type, then by extension", () => {
    expect(isMarkdown("text/markdown; charset=utf-8", null)).toBe(true);
    expect(isMarkdown(null, "NOTES.MD")).toBe(true);
    expect(isMarkdown("text/plain", "notes.txt")).toBe(false);
  });
});
