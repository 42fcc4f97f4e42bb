import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/**
 * A modal dialog shown while mounted: Escape asks `onClose` (unless `busy`), unmounting closes
 * it. The shell the package dialogs share.
 */
export function Modal({
  testid,
  labelledBy,
  onClose,
  busy,
  wide,
  children,
}: {
  testid: string;
  labelledBy: string;
  onClose: () => void;
  busy?: boolean;
  /** Room for a form beside its preview. */
  wide?: boolean;
  children: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    d?.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog
      ref={dialog}
      class={wide ? "dialog dialog-wide dialog-xwide" : "dialog dialog-wide"}
      data-testid={testid}
      aria-labelledby={labelledBy}
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      {children}
    </dialog>
  );
}
