import { useEffect, useState } from "preact/hooks";
import { UpdateDialog } from "../../components/UpdateDialog";
import { errorMessage, ipc } from "../../ipc";

/**
 * Help: where the app logs (a file a day, the newest seven kept), opening that folder, and a
 * diagnostics bundle to attach to a support request (logs, versions, the profiles without any
 * secret, the fleet database's figures), saved where the operator chooses; checking for a newer
 * version of the app (components/UpdateDialog; where from is Settings → Updates).
 */
export function HelpCard() {
  const [folder, setFolder] = useState<string | null>(null);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const [updating, setUpdating] = useState(false);

  useEffect(() => {
    ipc.logFolder().then(setFolder, (e) => setResult({ ok: false, text: errorMessage(e) }));
  }, []);

  const open = () => ipc.openLogFolder().catch((e) => setResult({ ok: false, text: `The folder could not be opened: ${errorMessage(e)}` }));

  const save = async () => {
    const day = new Date().toISOString().slice(0, 10);
    const path = await ipc.pickSaveFile({ title: "Save diagnostics", defaultName: `dcs-console-diagnostics-${day}.zip`, filters: [{ name: "Zip", extensions: ["zip"] }] });
    if (!path) return;
    setSaving(true);
    try {
      const b = await ipc.saveDiagnostics(path);
      setResult({ ok: true, text: `Saved ${b.path} (${b.entries.length} files, ${Math.max(1, Math.round(b.bytes / 1024))} KiB). It holds no secret or token.` });
    } catch (e) {
      setResult({ ok: false, text: `The diagnostics were not saved: ${errorMessage(e)}` });
    } finally {
      setSaving(false);
    }
  };

  return (
    <div class="card" data-testid="help">
      <h2>Help</h2>
      <p class="muted">
        The app logs to a file a day, the newest seven kept{folder && <>, in </>}
        {folder && <code data-testid="log-folder">{folder}</code>}. Secrets and tokens never reach a log line.
      </p>
      <div class="help-actions">
        <button type="button" class="button" onClick={open} data-testid="open-log-folder">
          Open log folder
        </button>
        <button type="button" class="button" onClick={save} disabled={saving} data-testid="save-diagnostics">
          {saving ? "Saving…" : "Save diagnostics…"}
        </button>
        <button type="button" class="button" onClick={() => setUpdating(true)} data-testid="check-updates">
          Check for updates…
        </button>
      </div>
      {updating && <UpdateDialog onClose={() => setUpdating(false)} />}
      {result && (
        <p class={result.ok ? "result result-ok" : "result result-error"} role={result.ok ? "status" : "alert"} data-testid="diagnostics-result">
          {result.text}
        </p>
      )}
    </div>
  );
}
