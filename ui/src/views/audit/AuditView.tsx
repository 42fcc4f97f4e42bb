import { useEffect, useState } from "preact/hooks";
import { useWideWindow } from "../../components/DataTable";
import { FilterSelect, FilterText } from "../../components/FilterText";
import { Modal, ModalCancel } from "../../components/Modal";
import { Empty, ErrorBox, Loading, NoticeRow, type Notice } from "../../components/States";
import { Time } from "../../components/Time";
import { errorMessage, ipc, type AuditExportFormat, type AuditPage_Serialize, type AuditRecord_Serialize, type AuditVerified_Serialize, type Link } from "../../ipc";
import { auditRequest, NO_AUDIT_FILTERS, OPERATION_AREAS, operationLabel, RESULTS, resultTone, type AuditFilters } from "../../lib/audit";
import { formatBytes } from "../../lib/transfer";
import "./audit.css";

type AuditRecord = AuditRecord_Serialize;

/** Records asked for at first, and added by "Show more". */
const STEP = 200;

/**
 * The audit log of this computer: every write made with the app or `dcs` and its outcome, the
 * console's own actions (rollouts, profiles), newest first; filtered, exported, and its hash
 * chain checked. A write whose outcome never came back is "unknown" and says what to look at.
 */
export function AuditView({ onOpen }: { onOpen: (l: Link) => void }) {
  const [filters, setFilters] = useState<AuditFilters>(NO_AUDIT_FILTERS);
  const [limit, setLimit] = useState(STEP);
  const [page, setPage] = useState<AuditPage_Serialize | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [badFilter, setBadFilter] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  const [path, setPath] = useState<string | null>(null);
  const [open, setOpen] = useState<AuditRecord | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [verified, setVerified] = useState<AuditVerified_Serialize | null>(null);
  const [busy, setBusy] = useState<"verifying" | "exporting" | null>(null);

  useEffect(() => {
    ipc.auditInfo().then((i) => setPath(i.path), () => setPath(null));
  }, []);

  useEffect(() => {
    let live = true;
    ipc.auditList(auditRequest(filters), limit).then(
      (p) => {
        if (!live) return;
        setPage(p);
        setError(null);
        setBadFilter(null);
      },
      (e) => {
        if (!live) return;
        setError(e);
        setBadFilter((e as { field?: string | null }).field ?? null);
      },
    );
    return () => {
      live = false;
    };
  }, [filters, limit, reload]);

  const apply = (name: keyof AuditFilters, v: string) => {
    setFilters((f) => ({ ...f, [name]: v }));
    setLimit(STEP);
  };
  const anyFilter = Object.values(filters).some((v) => v.trim() !== "");

  const verify = async () => {
    setBusy("verifying");
    try {
      setVerified(await ipc.auditVerify());
    } catch (e) {
      setNotice({ kind: "error", text: `The check failed: ${errorMessage(e)}` });
    } finally {
      setBusy(null);
    }
  };

  const exportAs = async (format: AuditExportFormat) => {
    const csv = format === "csv";
    const target = await ipc.pickSaveFile({
      title: `Export the audit records as ${csv ? "CSV" : "JSON Lines"}`,
      defaultName: csv ? "audit.csv" : "audit.jsonl",
      filters: [csv ? { name: "CSV", extensions: ["csv"] } : { name: "JSON Lines", extensions: ["jsonl"] }],
    });
    if (!target) return;
    setBusy("exporting");
    try {
      const n = await ipc.auditExport(auditRequest(filters), format, target);
      setNotice({ kind: "ok", text: `Exported ${n} record${n === 1 ? "" : "s"} to ${target}.` });
    } catch (e) {
      setNotice({ kind: "error", text: `The export failed: ${errorMessage(e)}` });
    } finally {
      setBusy(null);
    }
  };

  // A narrow window leaves out who made each write (its dialog says).
  const wide = useWideWindow(1100);
  const records = page?.records ?? [];
  const total = page?.total ?? 0;
  return (
    <section class="view view-dense" aria-labelledby="audit-title">
      <div class="view-head">
        <h1 id="audit-title">Audit log</h1>
        <span class="muted" data-testid="audit-count">
          {page && total > 0 ? `${records.length} of ${total} record${total === 1 ? "" : "s"}` : ""}
        </span>
        <span class="spacer" />
        <button type="button" class="button" data-testid="audit-refresh" onClick={() => setReload((n) => n + 1)}>
          Refresh
        </button>
        <button type="button" class="button" data-testid="audit-verify" disabled={busy !== null} onClick={verify}>
          {busy === "verifying" ? "Checking…" : "Check the chain"}
        </button>
        <button type="button" class="button" data-testid="audit-export-csv" disabled={busy !== null} onClick={() => exportAs("csv")}>
          Export CSV…
        </button>
        <button type="button" class="button" data-testid="audit-export-jsonl" disabled={busy !== null} onClick={() => exportAs("jsonl")}>
          Export JSON Lines…
        </button>
      </div>
      {path && (
        <p class="muted audit-path">
          Shared with <code>dcs audit</code>: <code data-testid="audit-path">{path}</code>
        </p>
      )}

      {verified && (
        <div
          class={verified.broken ? "result result-error notice-row" : "result result-ok notice-row"}
          role="status"
          data-testid="audit-verified"
          data-broken={verified.broken ? "true" : "false"}
        >
          {verified.broken
            ? `Entry ${verified.broken.seq ?? "?"} (line ${verified.broken.line}) is broken: ${verified.broken.reason}. The ${verified.entries} entries before it are whole.`
            : `The chain is whole: ${verified.entries} entries checked.`}
          <button type="button" class="button button-quiet button-small" onClick={() => setVerified(null)} aria-label="Dismiss">
            ✕
          </button>
        </div>
      )}

      <div class="filters list-toolbar" data-testid="audit-filters">
        <span class={badFilter === "since" ? "invalid" : undefined}>
          <FilterText idPrefix="audit" label="Since (local time)" name="since" type="datetime-local" value={filters.since} onApply={apply} />
        </span>
        <span class={badFilter === "until" ? "invalid" : undefined}>
          <FilterText idPrefix="audit" label="Before (local time)" name="until" type="datetime-local" value={filters.until} onApply={apply} />
        </span>
        <FilterText idPrefix="audit" label="Customer" name="customer" value={filters.customer} onApply={apply} placeholder="label, id or own" />
        <FilterSelect label="Operation" name="operation" value={filters.operation} options={OPERATION_AREAS} onApply={apply} />
        <FilterText idPrefix="audit" label="Device or id" name="device" value={filters.device} onApply={apply} placeholder="any part of an id" />
        <FilterSelect label="Outcome" name="result" value={filters.result} options={RESULTS.map((r) => ({ value: r, label: r }))} onApply={apply} />
        {anyFilter && (
          <button type="button" class="button button-quiet" data-testid="audit-clear" onClick={() => setFilters(NO_AUDIT_FILTERS)}>
            Clear filters
          </button>
        )}
      </div>

      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="audit-notice" />}
      {error !== null && <ErrorBox error={error} onRetry={() => setReload((n) => n + 1)} />}
      {!page && error === null && <Loading label="Reading the audit log…" />}
      {page && records.length === 0 && (
        <Empty title={anyFilter ? "No record matches these filters" : "Nothing recorded yet"}>
          {anyFilter ? "Clear a filter to see more." : "Every write made here or with dcs will be listed, with what came of it."}
        </Empty>
      )}
      {records.length > 0 && (
        <div class="table-wrap">
          <table class="table table-compact audit-table" data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col" style={{ width: "3.5rem" }}>#</th>
                <th scope="col" style={{ width: "10.5rem" }}>When</th>
                <th scope="col" style={{ width: "7.5rem" }}>Outcome</th>
                <th scope="col" style={{ width: "10.5rem" }}>Operation</th>
                <th scope="col">Concerns</th>
                <th scope="col" style={{ width: "7.5rem" }}>Customer</th>
                {wide && <th scope="col" style={{ width: "8rem" }}>By</th>}
              </tr>
            </thead>
            <tbody>
              {records.map((r) => (
                <tr key={r.seq} data-testid="audit-row" data-seq={r.seq} data-operation={r.operation} data-result={r.result}>
                  <td class="num">{r.seq}</td>
                  <td>
                    <Time at={r.at} seconds />
                  </td>
                  <td>
                    <ResultBadge record={r} />
                  </td>
                  <td>
                    <button type="button" class="link-button" data-testid="audit-open" onClick={() => setOpen(r)}>
                      {operationLabel(r.operation)}
                    </button>
                  </td>
                  <td class="mono audit-targets" title={r.targets.join("\n")}>
                    {r.targets.join(" · ") || <span class="muted">—</span>}
                  </td>
                  <td class="audit-customer">{r.customerLabel ?? (r.customer ? <code>{r.customer}</code> : <span class="muted">own</span>)}</td>
                  {wide && (
                    <td class="audit-by" title={`profile ${r.profile}, key ${r.keyId}, ${r.source}`}>
                      {r.osUser} <span class="muted">· {r.source}</span>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page && records.length < total && (
        <p>
          <button type="button" class="button" data-testid="audit-more" onClick={() => setLimit((n) => Math.min(n + STEP, 5000))} disabled={limit >= 5000}>
            {limit >= 5000 ? "Filter to see older records" : `Show ${Math.min(STEP, total - records.length)} more`}
          </button>
        </p>
      )}
      {open && <RecordDialog record={open} onClose={() => setOpen(null)} onOpen={onOpen} />}
    </section>
  );
}

function ResultBadge({ record }: { record: AuditRecord }) {
  const tone = resultTone(record.result);
  return (
    <span class={`audit-result audit-${tone}`} data-testid="audit-result">
      {record.result}
      {record.status !== null && <span class="audit-status"> {record.status}</span>}
    </span>
  );
}

/** Everything a record holds, and for an unknown outcome where to look. */
function RecordDialog({ record: r, onClose, onOpen }: { record: AuditRecord; onClose: () => void; onOpen: (l: Link) => void }) {
  const rows: [string, preact.ComponentChildren][] = [
    ["Outcome", <ResultBadge record={r} />],
    ["Recorded", <Time at={r.at} seconds />],
    ["Operation", <code>{r.operation}</code>],
    ["Request", r.method ? <code class="audit-wrap">{`${r.method} ${r.path ?? ""}`}</code> : <span class="muted">local action</span>],
    ["Concerns", r.targets.length ? <code class="audit-wrap">{r.targets.join("\n")}</code> : <span class="muted">—</span>],
    ["Customer", r.customer ? `${r.customerLabel ?? ""} ${r.customer}`.trim() : "own environment"],
    ["Profile and key", `${r.profile} · ${r.keyId || "—"}`],
    ["OS user and program", `${r.osUser} · ${r.source}`],
  ];
  if (r.kind === "write") {
    rows.splice(2, 0, ["Ended", r.finishedAt ? <Time at={r.finishedAt} seconds /> : <span class="muted">not recorded: the program stopped first</span>]);
  }
  if (r.fileName) rows.push(["File", `${r.fileName} (${formatBytes(r.fileSize)})`]);
  if (r.sha256) rows.push(["SHA-256", <code class="audit-wrap">{r.sha256}</code>]);
  if (r.error) rows.push(["Error", <span class="audit-wrap">{r.error}</span>]);
  return (
    <Modal testid="audit-record" labelledBy="audit-record-title" onClose={onClose} wide>
      <h2 id="audit-record-title">
        Entry {r.seq}: {operationLabel(r.operation)}
      </h2>
      {r.result === "unknown" && (
        <div class="notice" role="status" data-testid="audit-unknown">
          The service's answer never came back: it may or may not have applied this write.
          {r.check && (
            <>
              {" "}
              {r.check.text}.{" "}
              <button
                type="button"
                class="button button-small"
                data-testid="audit-check"
                onClick={() => {
                  onOpen({ kind: r.check!.kind, id: r.check!.id });
                  onClose();
                }}
              >
                Open {r.check.kind} {r.check.id}
              </button>
            </>
          )}
        </div>
      )}
      <dl class="audit-details">
        {rows.map(([k, v]) => (
          <>
            <dt key={`${k}-t`}>{k}</dt>
            <dd key={`${k}-d`}>{v}</dd>
          </>
        ))}
      </dl>
      {r.request && (
        <>
          <h3>{r.kind === "write" ? "What was sent (secrets left out)" : "What was chosen"}</h3>
          <pre class="audit-request" data-testid="audit-request">
            {pretty(r.request)}
          </pre>
        </>
      )}
      <div class="dialog-actions">
        <ModalCancel testid="audit-record-close">Close</ModalCancel>
      </div>
    </Modal>
  );
}

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}
