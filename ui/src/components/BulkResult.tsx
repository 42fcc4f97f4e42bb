import type { ComponentChildren } from "preact";
import type { BulkReport } from "../lib/bulk";

/**
 * What became of a bulk action: a line for all of it, and each item that failed with the
 * service's reason (those done stay done). `name` says an item as the operator knows it.
 */
export function BulkResult({ report, name, onDismiss, testid }: {
  report: BulkReport;
  name: (id: string) => ComponentChildren;
  onDismiss: () => void;
  testid: string;
}) {
  return (
    <div class={report.failed.length ? "result result-error notice-row bulk-result" : "result result-ok notice-row bulk-result"} role="status" data-testid={testid}>
      <div>
        <span data-testid={`${testid}-text`}>{report.text}</span>
        {report.failed.length > 0 && (
          <ul class="bulk-failures">
            {report.failed.map((f) => (
              <li key={f.id} data-testid={`${testid}-failure`} data-id={f.id}>
                {name(f.id)}: {f.error}
              </li>
            ))}
          </ul>
        )}
      </div>
      <button type="button" class="button button-quiet button-small" onClick={onDismiss} aria-label="Dismiss">
        ✕
      </button>
    </div>
  );
}
