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
