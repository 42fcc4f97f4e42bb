import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useContext, useEffect, useRef } from "preact/hooks";
import { useLayer } from "../lib/layers";
import { useConfirm } from "./Confirm";

/** How a dialog's own buttons close it: through the same question as Escape. */
const CloseContext = createContext<(() => void) | null>(null);

/**
 * A modal dialog shown while mounted; unmounting closes it. The shell every dialog shares.
 *
 * It is a layer (lib/layers): Escape closes it only when nothing inside is open (a picker's
 * list, a confirmation). Every way out — Escape, the X, a click on the backdrop, a
 * [`ModalCancel`] button — goes through one close: nothing while `busy`; with `dirty` (the form
 * holds changes) it asks "Discard changes?" first and closes only on yes.
 *
 * It is never taller than the window: the content scrolls between the title (the first `h2`)
 * and the row of buttons (`.dialog-actions`, or a `.form`'s `.form-actions`), which stay in
 * view; it hangs from a fixed top, so it grows downwards instead of re-centring.
 */
export function Modal({
  testid,
  labelledBy,
  onClose,
  busy,
  dirty,
  wide,
  children,
}: {
  testid: string;
  labelledBy: string;
  onClose: () => void;
  busy?: boolean;
  /** The form holds changes that closing would lose. */
  dirty?: boolean;
  /** Room for a form beside its preview. */
  wide?: boolean;
  children: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [askElement, ask] = useConfirm();
  const asking = useRef(false);
  const downOnBackdrop = useRef(false);
  useEffect(() => {
    const d = dialog.current;
    d?.showModal();
    return () => d?.close();
  }, []);

  const requestClose = async () => {
    if (busy || asking.current) return;
    if (!dirty) return onClose();
    asking.current = true;
    try {
      const discard = await ask({
        title: "Discard changes?",
        body: <p>What you typed in this form is lost.</p>,
        confirmLabel: "Discard changes",
        dismissLabel: "Keep editing",
        danger: true,
      });
      if (discard) onClose();
    } finally {
      asking.current = false;
    }
  };
  useLayer(true, () => void requestClose());

  const outside = (e: MouseEvent) => {
    const d = dialog.current;
    if (!d || e.target !== d) return false;
    const r = d.getBoundingClientRect();
    return e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom;
  };

  return (
    <dialog
      ref={dialog}
      class={wide ? "dialog dialog-wide dialog-xwide" : "dialog dialog-wide"}
      data-testid={testid}
      aria-labelledby={labelledBy}
      onCancel={(e) => {
        // Escape is the layer stack's: it closes only the innermost layer.
        e.preventDefault();
      }}
      onMouseDown={(e) => {
        downOnBackdrop.current = outside(e);
      }}
      onClick={(e) => {
        if (downOnBackdrop.current && outside(e)) void requestClose();
        downOnBackdrop.current = false;
      }}
    >
      <CloseContext.Provider value={requestClose}>
        {/* The body scrolls; the title and the buttons at the foot stay in view (styles.css). */}
        <div class="dialog-scroll">{children}</div>
        {/* After the content: opening the dialog focuses its first field, not the X. */}
        <button
          type="button"
          class="dialog-x"
          aria-label="Close"
          title="Close"
          disabled={busy}
          data-testid={`${testid}-x`}
          onClick={() => void requestClose()}
        >
          ×
        </button>
        {askElement}
      </CloseContext.Provider>
    </dialog>
  );
}

/** The dialog's Cancel (or Close) button: closes as Escape does, asking first about changes. */
export function ModalCancel({
  children,
  disabled,
  testid,
}: {
  children: ComponentChildren;
  disabled?: boolean;
  testid?: string;
}) {
  const close = useContext(CloseContext);
  return (
    <button type="button" class="button" disabled={disabled} data-testid={testid} onClick={() => close?.()}>
      {children}
    </button>
  );
}
