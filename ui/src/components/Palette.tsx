import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { errorMessage, ipc, type PaletteItem } from "../ipc";
import { actions, compose, validRecent, withRecent, type Entry, type Target } from "../lib/palette";
import { remember, useRemembered } from "../lib/remember";
import { prepareArea } from "../prepare";
import { useSession } from "../session";
import { Modal } from "./Modal";
import "./Palette.css";

/** How long typing must pause before the service is asked. */
const DEBOUNCE_MS = 140;

/**
 * The command palette (Ctrl+K): the app's actions and every entity by name or id. What is typed
 * is searched in Rust (`palette_search`) after a short pause; a later search stops the earlier
 * one there, and an answer that comes after a newer one was asked is dropped here. Arrow keys
 * move through the list, Enter opens, Escape closes. `mode` "module" asks for the module of a new
 * package (the list then holds modules only).
 */
export function Palette({
  onClose,
  onPick,
  initial = "",
  mode: initialMode = "all",
}: {
  onClose: () => void;
  onPick: (t: Target) => void;
  initial?: string;
  mode?: "all" | "module";
}) {
  const { info } = useSession();
  const [mode, setMode] = useState(initialMode);
  const [query, setQuery] = useState(initial);
  const [found, setFound] = useState<PaletteItem[]>([]);
  const [searching, setSearching] = useState(false);
  const [problems, setProblems] = useState<string[]>([]);
  const [active, setActive] = useState(0);
  const [recent, setRecent] = useRemembered<Entry[]>("palette.recent", [], validRecent);
  const asked = useRef(0);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);

  useEffect(() => input.current?.focus({ preventScroll: true }), [mode]);

  useEffect(() => {
    const q = query.trim();
    const n = ++asked.current;
    if (q === "") {
      setFound([]);
      setProblems([]);
      setSearching(false);
      return;
    }
    setSearching(true);
    const timer = setTimeout(() => {
      ipc.paletteSearch(q).then(
        (a) => {
          if (n !== asked.current || a.superseded) return;
          setFound(a.items);
          setProblems(a.problems);
          setSearching(false);
        },
        (e) => {
          if (n !== asked.current) return;
          setFound([]);
          setProblems([errorMessage(e)]);
          setSearching(false);
        },
      );
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query]);

  const entries = useMemo(() => {
    if (mode === "module") {
      return found
        .filter((f) => f.kind === "module")
        .map((f): Entry => ({ key: `new-package:${f.id}`, title: `New package of ${f.title}`, group: "Modules", target: { kind: "new-package", moduleId: f.id } }));
    }
    return compose(query, actions(info), recent, found);
  }, [mode, query, found, recent, info]);

  useEffect(() => setActive(0), [entries]);
  // An area made the active option is about to be opened: what its screen loads apart is fetched.
  const activeTarget = entries[active]?.target;
  useEffect(() => {
    if (activeTarget?.kind === "area") prepareArea(activeTarget.area);
  }, [activeTarget]);
  // The active option kept in view by scrolling the list alone (scrollIntoView would scroll the
  // dialog too, sliding the field under its title).
  useEffect(() => {
    const ul = list.current;
    const el = ul?.querySelector<HTMLElement>(`[data-index="${active}"]`);
    if (!ul || !el) return;
    const top = el.offsetTop - ul.offsetTop;
    if (top < ul.scrollTop) ul.scrollTop = top;
    else if (top + el.offsetHeight > ul.scrollTop + ul.clientHeight) ul.scrollTop = top + el.offsetHeight - ul.clientHeight;
  }, [active]);

  const pick = (e: Entry) => {
    if (e.target.kind === "choose-module") {
      setMode("module");
      setQuery("");
      return;
    }
    // Stored at once: the palette closes before an effect would store it.
    const next = withRecent(recent, e);
    remember("palette.recent", next);
    setRecent(next);
    onClose();
    onPick(e.target);
  };

  const onKey = (ev: KeyboardEvent) => {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      const step = ev.key === "ArrowDown" ? 1 : -1;
      setActive((a) => (entries.length === 0 ? 0 : (a + step + entries.length) % entries.length));
    } else if (ev.key === "PageDown" || ev.key === "PageUp") {
      ev.preventDefault();
      setActive((a) => Math.max(0, Math.min(entries.length - 1, a + (ev.key === "PageDown" ? 8 : -8))));
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      const e = entries[active];
      if (e) pick(e);
    }
  };

  const optionId = (i: number) => `palette-option-${i}`;
  const title = mode === "module" ? "New package of which module?" : "Go to anything";
  let lastGroup = "";

  return (
    <Modal testid="palette" labelledBy="palette-title" onClose={onClose}>
      <h2 id="palette-title" class="palette-title">
        {title}
      </h2>
      <div class="palette">
        <input
          ref={input}
          type="text"
          class="palette-input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-autocomplete="list"
          aria-activedescendant={entries.length > 0 ? optionId(active) : undefined}
          aria-label={title}
          placeholder={mode === "module" ? "Module name" : "Action, device name or id, module, package, downlink, binding…"}
          value={query}
          maxLength={200}
          spellcheck={false}
          autoComplete="off"
          data-testid="palette-input"
          onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          onKeyDown={onKey}
        />
        <p class="palette-status" aria-live="polite" data-testid="palette-status">
          {searching ? "Searching…" : query.trim() !== "" && entries.length === 0 ? "Nothing found." : ""}
        </p>
        <ul id="palette-list" ref={list} class="palette-list" role="listbox" aria-label="Results" data-testid="palette-list">
          {entries.map((e, i) => {
            const head = e.group !== lastGroup ? e.group : null;
            lastGroup = e.group;
            return (
              <li key={e.key} role="presentation">
                {head && (
                  <div class="palette-group" role="presentation">
                    {head}
                  </div>
                )}
                <div
                  id={optionId(i)}
                  role="option"
                  aria-selected={i === active}
                  class={i === active ? "palette-option active" : "palette-option"}
                  data-index={i}
                  data-testid="palette-option"
                  data-key={e.key}
                  onMouseMove={() => setActive(i)}
                  onClick={() => pick(e)}
                >
                  <span class="palette-option-title">{e.title}</span>
                  {e.detail && <span class="palette-option-detail">{e.detail}</span>}
                  {e.keys && <kbd class="palette-keys">{e.keys}</kbd>}
                </div>
              </li>
            );
          })}
        </ul>
        {problems.length > 0 && (
          <p class="palette-problems" role="status" data-testid="palette-problems">
            Not searched: {problems.join("; ")}
          </p>
        )}
        <p class="palette-foot">
          <kbd>↑</kbd> <kbd>↓</kbd> to move, <kbd>Enter</kbd> to open, <kbd>Esc</kbd> to close
        </p>
      </div>
    </Modal>
  );
}
