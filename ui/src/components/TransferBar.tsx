import type { TransferProgress } from "../ipc";
import { describeProgress, fraction } from "../lib/transfer";

/** A transfer under way: bar, bytes, rate, time left, and Cancel. */
export function TransferBar({ progress, onCancel }: { progress: TransferProgress | null; onCancel?: () => void }) {
  const share = fraction(progress);
  return (
    <div class="transfer" data-testid="transfer">
      <progress max={1} value={progress?.total ? share : undefined} aria-label="Progress" />
      <span class="transfer-text" data-testid="transfer-text">
        {progress ? `${describeProgress(progress)}${progress.total ? ` (${Math.floor(share * 100)} %)` : ""}` : "Starting…"}
      </span>
      {onCancel && (
        <button type="button" class="button button-small" onClick={onCancel} data-testid="transfer-cancel">
          Cancel
        </button>
      )}
    </div>
  );
}
