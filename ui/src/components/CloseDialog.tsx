import { useState } from "preact/hooks";
import { errorMessage, ipc } from "../ipc";
import { Modal, ModalCancel } from "./Modal";

/**
 * Asked when the window is closed while rollouts this window moves on run (Rust's `CloseAsked`;
 * those a runner or another console drives are not counted): it can go on in the background
 * (window hidden, icon in the tray) or quit (a runner on the same fleet takes them over at once;
 * without one they go on at the next start).
 */
export function CloseDialog({ running, onClose }: { running: number; onClose: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const what = running === 1 ? "A rollout is running" : `${running} rollouts are running`;
  const background = async () => {
    try {
      await ipc.keepInBackground();
      onClose();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <Modal testid="close-dialog" labelledBy="close-title" onClose={onClose}>
      <h2 id="close-title">{what}</h2>
      <p>
        This window moves {running === 1 ? "it" : "them"} on: it sets each wave's targets. Keep it running in the background, with its icon
        in the tray, to let {running === 1 ? "it" : "them"} go on; open the console again from the tray, a notification or by starting it.
      </p>
      <p class="muted" data-testid="close-runner">
        Quitting pauses nothing: a runner (<code>dcs serve</code>) on the same fleet takes {running === 1 ? "it" : "them"} over at once;
        without one, {running === 1 ? "the rollout goes" : "they go"} on when the console starts again.
      </p>
      {error && (
        <p class="result result-error" role="alert">
          {error}
        </p>
      )}
      <div class="dialog-actions">
        <ModalCancel testid="close-cancel">Cancel</ModalCancel>
        <button type="button" class="button" data-testid="close-quit" onClick={() => void ipc.quitApp()}>
          Quit
        </button>
        <button type="button" class="button button-primary" data-testid="close-background" onClick={() => void background()}>
          Keep running in the background
        </button>
      </div>
    </Modal>
  );
}
