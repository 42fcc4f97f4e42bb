import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Empty, ErrorBox, Loading } from "../../components/States";
import { formatTimestamp, shortId, toggleSort } from "../../lib/format";
import { Pager, type PagerState } from "../../lib/pager";
import { ipc, type FirmwareModule, type FirmwarePackage } from "../../ipc";
import { NewPackageDialog } from "./NewPackage";

const COLUMNS: { field: string | null; label: string }[] = [
  { field: "name", label: "Name" },
  { field: "firmwareVersionAttributeName", label: "Version attribute" },
  { field: "deviceSpecificationId", label: "Device specification" },
  { field: "createdAt", label: "Created (UTC)" },
  { field: "modifiedAt", label: "Modified (UTC)" },
  { field: null, label: "" },
];

/** Firmware modules of the active profile: first page at once, more on scroll. */
export function FirmwareView() {
  const [sort, setSort] = useState<string | null>("name");
  const pager = useMemo(() => new Pager<FirmwareModule>(async () => ({ items: [], next: null })), []);
  const [state, setState] = useState<PagerState<FirmwareModule>>(pager.snapshot);
  const sentinel = useRef<HTMLTableRowElement>(null);
  const [creatingFor, setCreatingFor] = useState<FirmwareModule | null>(null);
  const [created, setCreated] = useState<{ pkg: FirmwarePackage; module: string } | null>(null);

  useEffect(() => pager.subscribe(setState), [pager]);

  useEffect(() => {
    pager.reload(async (next) => {
      const page = await ipc.listModules({ next, sort, deviceSpecificationId: null, limit: null });
      return { items: page.items, next: page.next };
    });
  }, [pager, sort]);

  useEffect(() => {
    const el = sentinel.current;
    if (!el) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) pager.loadMore();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [pager, state.status, state.items.length]);

  return (
    <section class="view" aria-labelledby="firmware-title">
      <div class="view-head">
        <h1 id="firmware-title">Firmware modules</h1>
        <span class="muted" data-testid="module-count">
          {state.status === "ready" || state.status === "loadingMore"
            ? `${state.items.length}${state.done ? "" : "+"} module${state.items.length === 1 ? "" : "s"}`
            : ""}
        </span>
      </div>

      {created && (
        <div class="result result-ok" role="status" data-testid="package-created">
          Created package <strong>{created.pkg.firmwareVersion}</strong> of {created.module}{" "}
          <code>{created.pkg.id}</code>
        </div>
      )}
      {creatingFor && (
        <NewPackageDialog
          module={creatingFor}
          onClose={() => setCreatingFor(null)}
          onCreated={(pkg) => {
            setCreated({ pkg, module: creatingFor.name });
            setCreatingFor(null);
          }}
        />
      )}
      {state.status === "loading" && <Loading label="Loading firmware modules…" />}
      {state.status === "error" && <ErrorBox error={state.error} onRetry={() => pager.reload()} />}
      {(state.status === "ready" || state.status === "loadingMore") && state.items.length === 0 && (
        <Empty title="No firmware modules">This environment has no firmware modules yet.</Empty>
      )}
      {state.items.length > 0 && (
        <div class="table-wrap">
          <table class="table" data-testid="modules-table">
            <thead>
              <tr>
                {COLUMNS.map((c) => {
                  const active = sort === c.field ? "ascending" : sort === `-${c.field}` ? "descending" : undefined;
                  return (
                    <th key={c.label} aria-sort={active ?? "none"} scope="col">
                      {c.field ? (
                        <button type="button" class="th-button" onClick={() => setSort(toggleSort(sort, c.field!))}>
                          {c.label}
                          <span class="sort-mark" aria-hidden="true">
                            {active === "ascending" ? "▲" : active === "descending" ? "▼" : ""}
                          </span>
                        </button>
                      ) : (
                        c.label
                      )}
                    </th>
                  );
                })}
              </tr>
            </thead>
            <tbody>
              {state.items.map((m) => (
                <tr key={m.id} data-testid="module-row" data-id={m.id}>
                  <td data-testid="module-name" title={m.id}>
                    {m.name}
                  </td>
                  <td>
                    <code>{m.firmwareVersionAttributeName}</code>
                  </td>
                  <td title={m.deviceSpecificationId}>
                    <code>{shortId(m.deviceSpecificationId)}</code>
                  </td>
                  <td>{formatTimestamp(m.createdAt)}</td>
                  <td>{formatTimestamp(m.modifiedAt)}</td>
                  <td class="actions-cell">
                    <button
                      type="button"
                      class="button button-small"
                      onClick={() => setCreatingFor(m)}
                      data-testid="new-package"
                      aria-label={`New package of ${m.name}`}
                    >
                      New package
                    </button>
                  </td>
                </tr>
              ))}
              {!state.done && (
                <tr ref={sentinel} class="sentinel">
                  <td colSpan={COLUMNS.length}>
                    {state.error ? (
                      <ErrorBox error={state.error} onRetry={() => pager.loadMore()} />
                    ) : (
                      <Loading label="Loading more…" />
                    )}
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
