import { Channel } from "@tauri-apps/api/core";
import { useEffect, useState } from "preact/hooks";
import type { UpdateCheck, UpdateDone, UpdateProgress } from "../ipc";
import { errorMessage, ipc } from "../ipc";
import { formatBytes } from "../lib/transfer";
import { Markdown, prepareNotes } from "./Markdown";
import { Time } from "./Time";
import { Modal, ModalCancel } from "./Modal";

type Step =
  | { at: "checking" }
  | { at: "checked"; check: UpdateCheck }
  | { at: "downloading"; check: UpdateCheck; progress: UpdateProgress | null }
  | { at: "done"; done: UpdateDone }
  | { at: "failed"; error: string; check: UpdateCheck | null };

/**
 * "Check for updates": asks Rust to read the update manifest (Settings → Updates says where),
 * then shows the newer version and its release notes before anything is downloaded. Installing
 * downloads the package, checks its signature against the app's key, and installs it (then
 * offers to restart) or, for a copy that cannot replace itself, keeps it and says where.
 */
export function UpdateDialog({ onClose }: { onClose: () => void }) {
  const [step, setStep] = useState<Step>({ at: "checking" });

  const check = () => {
    setStep({ at: "checking" });
    // An offer's notes are Markdown: the renderer loads while the service is asked.
    prepareNotes();
    ipc.checkForUpdate().then(
      (check) => setStep({ at: "checked", check }),
      (e) => setStep({ at: "failed", error: errorMessage(e), check: null }),
    );
  };
  useEffect(check, []);

  const get = async (check: UpdateCheck) => {
    const offer = check.offer;
    if (!offer) return;
    setStep({ at: "downloading", check, progress: null });
    const channel = new Channel<UpdateProgress>();
    channel.onmessage = (progress) => setStep((s) => (s.at === "downloading" ? { ...s, progress } : s));
    try {
      setStep({ at: "done", done: await ipc.getUpdate(offer.version, channel) });
    } catch (e) {
      setStep({ at: "failed", error: errorMessage(e), check });
    }
  };

  const busy = step.at === "downloading";
  return (
    <Modal testid="update-dialog" labelledBy="update-title" onClose={onClose} busy={busy}>
      <h2 id="update-title">Updates</h2>
      {step.at === "checking" && (
        <p role="status" data-testid="update-checking">
          Checking for a newer version…
        </p>
      )}
      {(step.at === "checked" || step.at === "downloading") && <Offer check={step.check} />}
      {step.at === "downloading" && <DownloadBar progress={step.progress} />}
      {step.at === "done" && <Done done={step.done} />}
      {step.at === "failed" && (
        <>
          {step.check && <Offer check={step.check} />}
          <p class="result result-error" role="alert" data-testid="update-error">
            {step.error}
          </p>
        </>
      )}
      <div class="dialog-actions">
        {busy ? (
          <button type="button" class="button" data-testid="update-cancel" onClick={() => void ipc.cancelUpdate()}>
            Stop the download
          </button>
        ) : (
          <ModalCancel testid="update-close">Close</ModalCancel>
        )}
        {step.at === "failed" && (
          <button type="button" class="button button-primary" data-testid="update-check-again" onClick={check}>
            Check again
          </button>
        )}
        {step.at === "checked" && step.check.offer && (
          <button type="button" class="button button-primary" data-testid="update-get" onClick={() => void get(step.check)}>
            Get version {step.check.offer.version}
          </button>
        )}
        {step.at === "done" && step.done.kind === "installed" && (
          <button type="button" class="button button-primary" data-testid="update-restart" onClick={() => void ipc.restartApp()}>
            Restart now
          </button>
        )}
      </div>
    </Modal>
  );
}

function Offer({ check }: { check: UpdateCheck }) {
  const o = check.offer;
  if (!o)
    return (
      <p role="status" data-testid="update-none">
        Version {check.current} is the newest (checked at <code class="break-all">{check.endpoint}</code>).
      </p>
    );
  return (
    <div data-testid="update-offer" data-version={o.version}>
      <p>
        Version <strong data-testid="update-version">{o.version}</strong> is available; this is {o.current}.
        {o.date && (
          <>
            {" "}
            Published <Time at={o.date} />.
          </>
        )} The package comes from <code>{o.from}</code> and is checked against the app's key before it
        is used.
      </p>
      <h3>What is new</h3>
      <div data-testid="update-notes">
        {o.notes ? <Markdown text={o.notes} /> : <p class="muted">The update has no release notes.</p>}
      </div>
      {o.notesCut && <p class="muted">The notes are longer than shown here.</p>}
    </div>
  );
}

function DownloadBar({ progress }: { progress: UpdateProgress | null }) {
  const received = progress?.received ?? 0;
  const share = progress?.total ? Math.min(1, received / progress.total) : undefined;
  return (
    <div class="transfer" role="status" data-testid="update-progress">
      <progress max={1} value={share} aria-label="Download" />
      <span class="transfer-text">
        {progress
          ? `${formatBytes(received)}${progress.total ? ` of ${formatBytes(progress.total)}` : ""} downloaded`
          : "Starting the download…"}
      </span>
    </div>
  );
}

function Done({ done }: { done: UpdateDone }) {
  if (done.kind === "installed")
    return (
      <p class="result result-ok" role="status" data-testid="update-done" data-kind="installed">
        Version {done.version} is installed; it runs once the console restarts. Running rollouts go on after the restart.
      </p>
    );
  return (
    <p class="result result-ok" role="status" data-testid="update-done" data-kind="kept">
      Version {done.version} was downloaded and its signature checked. This copy cannot replace itself, so the package is kept at{" "}
      <code class="break-all" data-testid="update-kept-path">
        {done.path}
      </code>{" "}
      for you to install.
    </p>
  );
}
