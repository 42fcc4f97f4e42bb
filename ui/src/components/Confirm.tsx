import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Customer } from "../ipc";
import { actingLabel } from "../lib/forms";
import { useLayer } from "../lib/layers";

export type ConfirmRequest = {
  title: string;
  /** What will happen, in a sentence or a list. */
  body: ComponentChildren;
  /** Label of the button that goes ahead, e.g. "Create package". */
  confirmLabel: string;
  /** Label of the button that backs out; "Cancel" unless that would be ambiguous. */
  dismissLabel?: string;
  /** Whom a write to the service acts for; omit for local actions (profiles). */
  acting?: { profile: string; customer: Customer | null };
  danger?: boolean;
  /**
   * A word the user must type before the button goes ahead (for a step that is hard to undo,
   * such as a downgrade); the button stays disabled until it is typed exactly.
   */
  typeToConfirm?: string;
};

/**
 * A modal that asks before a write: says what will happen and for whom, and resolves to true
 * only when the user confirms (with `typeToConfirm`, after typing that word). Escape (it is the
 * innermost layer while open) and Cancel resolve to false.
 */
export function useConfirm(): [ComponentChildren, (r: ConfirmRequest) => Promise<boolean>] {
  const [request, setRequest] = useState<ConfirmRequest | null>(null);
  const resolver = useRef<((ok: boolean) => void) | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState("");

  useEffect(() => {
    const d = dialog.current;
    if (request && d && !d.open) d.showModal();
  }, [request]);

  const finish = (ok: boolean) => {
    dialog.current?.close();
    setRequest(null);
    setTyped("");
    resolver.current?.(ok);
    resolver.current = null;
  };

  const ask = (r: ConfirmRequest) =>
    new Promise<boolean>((resolve) => {
      resolver.current?.(false);
      resolver.current = resolve;
      setTyped("");
      setRequest(r);
    });

  useLayer(!!request, () => finish(false));
  const word = request?.typeToConfirm;
  const typedOk = !word || typed.trim() === word;

  const element = request && (
    <dialog
      ref={dialog}
      class="dialog"
      data-testid="confirm-dialog"
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        // Escape is the layer stack's (it closes only the innermost layer).
        e.preventDefault();
      }}
    >
      <div class="dialog-scroll">
        <h2 id="confirm-title">{request.title}</h2>
        <div class="dialog-body">{request.body}</div>
        {request.acting && (
          <p class={request.acting.customer ? "dialog-acting acting" : "dialog-acting"} data-testid="confirm-acting">
            Acts for <strong>{actingLabel(request.acting.customer)}</strong> with profile{" "}
            <strong>{request.acting.profile}</strong>.
          </p>
        )}
        {word && (
          <label class="confirm-typed">
            <span>
              Type <strong class="mono">{word}</strong> to go ahead
            </span>
            <input
              type="text"
              class="mono"
              value={typed}
              autoComplete="off"
              spellcheck={false}
              data-testid="confirm-typed"
              onInput={(e) => setTyped(e.currentTarget.value)}
            />
          </label>
        )}
        <div class="dialog-actions">
          <button type="button" class="button" onClick={() => finish(false)} data-testid="confirm-cancel">
            {request.dismissLabel ?? "Cancel"}
          </button>
          <button
            type="button"
            class={request.danger ? "button button-danger" : "button button-primary"}
            onClick={() => typedOk && finish(true)}
            disabled={!typedOk}
            data-testid="confirm-ok"
          >
            {request.confirmLabel}
          </button>
        </div>
      </div>
    </dialog>
  );
  return [element, ask];
}
