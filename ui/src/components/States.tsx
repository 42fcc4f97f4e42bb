import type { ComponentChildren } from "preact";
import { errorMessage, IpcError } from "../ipc";

export function Loading({ label }: { label: string }) {
  return (
    <div class="state state-loading" role="status" aria-live="polite" data-testid="loading">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state state-empty" data-testid="empty">
      <strong>{title}</strong>
      {children && <p>{children}</p>}
    </div>
  );
}

/** A failure with what the service said and a way to try again. */
export function ErrorBox({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const code = error instanceof IpcError ? error.code : null;
  return (
    <div class="state state-error" role="alert" data-testid="error">
      <strong>{code ? `Failed (${code.replace(/_/g, " ")})` : "Failed"}</strong>
      <p>{errorMessage(error)}</p>
      {onRetry && (
        <button type="button" class="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** The outcome of the last action on a screen, until the user dismisses it. */
export type Notice = { kind: "ok" | "error"; text: string; id?: string };

export function NoticeRow({ notice, onDismiss, testid }: { notice: Notice; onDismiss: () => void; testid: string }) {
  return (
    <div class={notice.kind === "ok" ? "result result-ok notice-row" : "result result-error notice-row"} role="status" data-testid={testid}>
      {notice.text} {notice.id && <code>{notice.id}</code>}
      <button type="button" class="button button-quiet button-small" onClick={onDismiss} aria-label="Dismiss">
        ✕
      </button>
    </div>
  );
}
