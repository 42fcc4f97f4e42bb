import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { Markdown, prepareNotes } from "../../components/Markdown";
import { Modal } from "../../components/Modal";
import { ErrorBox } from "../../components/States";
import { TransferBar } from "../../components/TransferBar";
import {
  ipc,
  IpcError,
  type Downloaded,
  type FileAttributes,
  type FirmwarePackage,
  type HashResult,
  type TransferProgress,
} from "../../ipc";
import { Time } from "../../components/Time";
import { describePrincipal } from "../../lib/format";
import { isMarkdown } from "../../lib/markdownKind";
import { recall, remember } from "../../lib/remember";
import { formatBytes, withProgress } from "../../lib/transfer";
import { useSession } from "../../session";

type Running = { progress: TransferProgress | null; job: number | null };

/** Runs one transfer at a time for a section, with its progress and job id for Cancel. */
function useTransfer() {
  const [running, setRunning] = useState<Running | null>(null);
  const run = async <T,>(start: (ch: Parameters<Parameters<typeof withProgress<T>>[0]>[0]) => Promise<T>): Promise<T> => {
    setRunning({ progress: null, job: null });
    try {
      return await withProgress(start, (p) => setRunning({ progress: p, job: p.job }));
    } finally {
      setRunning(null);
    }
  };
  const cancel = () => running?.job != null && ipc.cancelTransfer(running.job);
  return { running, run, cancel };
}

const cancelled = (e: unknown) => e instanceof IpcError && e.code === "cancelled";

/** Size and SHA-256 of a package's firmware file, which the service does not tell. */
type FileFacts = { size: number; sha256: string };
const isFacts = (v: unknown): v is FileFacts =>
  typeof v === "object" && v !== null && typeof (v as FileFacts).size === "number" && /^[0-9a-f]{64}$/.test(String((v as FileFacts).sha256));
// A package's firmware file is uploaded once and never replaced, so what was once learnt of it
// (at its upload, a download or a check) holds for as long as the package exists.
const factsKey = (packageId: string) => `firmware.file.${packageId}`;

/**
 * The files of one package: its firmware file (uploaded once: chosen or dropped, checksummed
 * in Rust, then streamed up with progress and Cancel; or downloaded with its SHA-256), and its
 * release notes (uploaded, replacing the previous ones; viewed safely; downloaded; deleted).
 */
export function PackageFilesDialog({
  pkg,
  droppedPath,
  onClose,
  onChanged,
}: {
  pkg: FirmwarePackage;
  /** A file dropped on the package, staged for upload. */
  droppedPath: string | null;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { info } = useSession();
  const [confirmElement, confirm] = useConfirm();
  const fw = useTransfer();
  const notes = useTransfer();
  const [firmwareName, setFirmwareName] = useState(pkg.firmwareFileName ?? null);
  const [notesName, setNotesName] = useState(pkg.releaseNotesFileName ?? null);
  const [staged, setStaged] = useState<{ path: string; hash: HashResult | null } | null>(null);
  const [uploaded, setUploaded] = useState<FileAttributes | null>(null);
  const [downloaded, setDownloaded] = useState<Downloaded | null>(null);
  const [facts, setFacts] = useState<FileFacts | null>(() => recall(factsKey(pkg.id), null, isFacts));
  const learn = (f: { size: number | null; sha256: string }) => {
    const known = { size: f.size ?? 0, sha256: f.sha256 };
    setFacts(known);
    remember(factsKey(pkg.id), known);
  };
  const [fwError, setFwError] = useState<unknown>(null);
  const [notesError, setNotesError] = useState<unknown>(null);
  const [notesText, setNotesText] = useState<{ text: string; markdown: boolean } | null>(null);
  const [notesInfo, setNotesInfo] = useState<string | null>(null);
  const acting = info ? { profile: info.profile, customer: info.acting } : undefined;
  const actingFor = info?.acting?.id ?? null;

  // The row may be older than the service's state: the file names are read afresh.
  useEffect(() => {
    ipc.getPackage(pkg.id).then(
      (fresh) => {
        setFirmwareName(fresh.firmwareFileName ?? null);
        setNotesName(fresh.releaseNotesFileName ?? null);
      },
      (e) => setFwError(e),
    );
  }, []);

  // A chosen or dropped file is checksummed in Rust first, and the result shown before sending.
  const stage = async (path: string) => {
    setFwError(null);
    setUploaded(null);
    setStaged({ path, hash: null });
    try {
      const hash = await fw.run((ch) => ipc.hashFile(path, ch));
      setStaged({ path, hash });
    } catch (e) {
      setStaged(null);
      if (!cancelled(e)) setFwError(e);
    }
  };
  useEffect(() => {
    if (droppedPath && !firmwareName) void stage(droppedPath);
  }, [droppedPath]);

  const choose = async () => {
    const path = await ipc.pickFile({ title: `Firmware file for ${pkg.firmwareVersion}`, defaultName: null, filters: [] });
    if (typeof path === "string") void stage(path);
  };

  const upload = async () => {
    if (!staged?.hash || !acting) return;
    const ok = await confirm({
      title: "Upload the firmware file?",
      body: (
        <>
          <p>
            <strong>{staged.hash.fileName}</strong> ({formatBytes(staged.hash.size)}, SHA-256{" "}
            <code class="hash">{staged.hash.sha256}</code>) becomes the firmware file of package{" "}
            <strong>{pkg.firmwareVersion}</strong>.
          </p>
          <p>
            <strong>Once only:</strong> a package's firmware file cannot be replaced or removed afterwards. For a different
            file, create a new package.
          </p>
          {staged.hash.size === 0 ? (
            <p class="warning-box" data-testid="empty-file-warning">
              <strong>The file is empty (0 bytes).</strong> The service does not say it refuses one, but a device would
              get nothing to install. Check that you chose the right file.
            </p>
          ) : null}
        </>
      ),
      confirmLabel: "Upload",
      acting,
    });
    if (!ok) return;
    setFwError(null);
    try {
      // The checksum shown and confirmed goes along: Rust sends the file without hashing it again.
      const hash = staged.hash;
      const attrs = await fw.run((ch) => ipc.uploadFirmwareFile({ packageId: pkg.id, path: staged.path, actingFor, sha256: hash.sha256 }, ch));
      learn(hash);
      setUploaded(attrs);
      setFirmwareName(attrs.name);
      setStaged(null);
      onChanged();
    } catch (e) {
      // The chosen file stays staged: nothing the user picked is lost.
      if (!cancelled(e)) setFwError(e);
      else setFwError(new Error("Upload cancelled: nothing was stored; the file is still chosen."));
    }
  };

  const download = async (kind: "firmware" | "notes") => {
    const name = kind === "firmware" ? firmwareName : notesName;
    const target = await ipc.pickSaveFile({ defaultName: name ?? null, title: `Save the ${kind === "firmware" ? "firmware file" : "release notes"}`, filters: [] });
    if (!target) return;
    const t = kind === "firmware" ? fw : notes;
    const setError = kind === "firmware" ? setFwError : setNotesError;
    setError(null);
    try {
      const got = await t.run((ch) =>
        kind === "firmware" ? ipc.downloadFirmwareFile({ packageId: pkg.id, target }, ch) : ipc.downloadReleaseNotes({ packageId: pkg.id, target }, ch),
      );
      if (kind === "firmware") {
        setDownloaded(got);
        learn(got);
      }
      else setNotesInfo(`Saved to ${got.path} (${formatBytes(got.size)}, SHA-256 ${got.sha256}).`);
    } catch (e) {
      if (!cancelled(e)) setError(e);
    }
  };

  // The service does not tell a stored file's size or SHA-256: read through once to learn them.
  const check = async () => {
    setFwError(null);
    try {
      learn(await fw.run((ch) => ipc.checksumFirmwareFile(pkg.id, ch)));
    } catch (e) {
      if (!cancelled(e)) setFwError(e);
    }
  };

  const uploadNotes = async () => {
    if (!acting) return;
    const path = await ipc.pickFile({ title: "Release notes", defaultName: null, filters: [{ name: "Release notes", extensions: ["md", "markdown", "txt"] }, { name: "Any file", extensions: ["*"] }] });
    if (typeof path !== "string") return;
    const ok = await confirm({
      title: notesName ? "Replace the release notes?" : "Upload release notes?",
      body: (
        <p>
          <code>{path}</code> becomes the release notes of package <strong>{pkg.firmwareVersion}</strong>
          {notesName ? (
            <>
              , <strong>replacing</strong> <code>{notesName}</code>
            </>
          ) : null}
          .
        </p>
      ),
      confirmLabel: notesName ? "Replace" : "Upload",
      acting,
    });
    if (!ok) return;
    setNotesError(null);
    try {
      const attrs = await notes.run((ch) => ipc.uploadReleaseNotes({ packageId: pkg.id, path, actingFor }, ch));
      setNotesName(attrs.name);
      setNotesText(null);
      setNotesInfo(`Uploaded ${attrs.name}.`);
      onChanged();
    } catch (e) {
      if (!cancelled(e)) setNotesError(e);
    }
  };

  const viewNotes = async () => {
    setNotesError(null);
    // The renderer loads while the notes are read.
    prepareNotes();
    try {
      const got = await ipc.readReleaseNotes(pkg.id);
      setNotesText({ text: got.text, markdown: isMarkdown(got.contentType, got.fileName ?? notesName) });
    } catch (e) {
      setNotesError(e);
    }
  };

  const deleteNotes = async () => {
    if (!acting || !notesName) return;
    const ok = await confirm({
      title: "Delete the release notes?",
      body: (
        <p>
          <code>{notesName}</code> is removed from package <strong>{pkg.firmwareVersion}</strong>. The firmware file stays.
        </p>
      ),
      confirmLabel: "Delete release notes",
      danger: true,
      acting,
    });
    if (!ok) return;
    setNotesError(null);
    try {
      await ipc.deleteReleaseNotes({ packageId: pkg.id, actingFor });
      setNotesName(null);
      setNotesText(null);
      setNotesInfo("Release notes deleted.");
      onChanged();
    } catch (e) {
      setNotesError(e);
    }
  };

  return (
    <Modal testid="package-files-dialog" labelledBy="files-title" onClose={onClose} busy={!!fw.running || !!notes.running}>
      {confirmElement}
      <h2 id="files-title">
        Files of package {pkg.firmwareVersion}
        {pkg._embedded?.module ? <span class="muted"> · {pkg._embedded.module.name}</span> : null}
      </h2>

      <section class="files-section" aria-labelledby="fw-title">
        <h3 id="fw-title">Firmware file</h3>
        {firmwareName ? (
          <>
            <p data-testid="firmware-file-name">
              <code>{firmwareName}</code> <span class="muted">uploaded once; it cannot be replaced.</span>
            </p>
            <dl class="facts" data-testid="firmware-file-facts">
              <dt>Size</dt>
              <dd data-testid="firmware-file-size">{facts ? formatBytes(facts.size) : <span class="muted">not known yet</span>}</dd>
              <dt>SHA-256</dt>
              <dd>
                {facts ? (
                  <code class="hash" data-testid="firmware-file-sha256">
                    {facts.sha256}
                  </code>
                ) : (
                  <>
                    <span class="muted">not told by the service; </span>
                    <button type="button" class="button button-small" onClick={check} disabled={!!fw.running} data-testid="check-firmware-file">
                      Read it to learn size and SHA-256
                    </button>
                  </>
                )}
              </dd>
            </dl>
          </>
        ) : (
          <>
            <div class="dropzone" data-testid="dropzone" data-package-id={pkg.id}>
              <strong>Drop a firmware file here</strong> or{" "}
              <button type="button" class="button button-small" onClick={choose} disabled={!!fw.running} data-testid="choose-file">
                Choose file…
              </button>
              <p class="muted">
                A package takes <strong>one</strong> firmware file, <strong>once</strong>: it cannot be replaced or removed
                afterwards. Its SHA-256 is computed here and checked by the service.
              </p>
            </div>
            {staged && (
              <dl class="facts" data-testid="staged-file">
                <dt>File</dt>
                <dd>
                  <code>{staged.path}</code>
                </dd>
                <dt>Size</dt>
                <dd>{staged.hash ? formatBytes(staged.hash.size) : "…"}</dd>
                <dt>SHA-256</dt>
                <dd>
                  <code class="hash" data-testid="staged-sha256">
                    {staged.hash ? staged.hash.sha256 : "computing…"}
                  </code>
                </dd>
              </dl>
            )}
          </>
        )}
        {fw.running && <TransferBar progress={fw.running.progress} onCancel={fw.running.job != null ? fw.cancel : undefined} />}
        {uploaded && (
          <div class="result result-ok" role="status" data-testid="upload-result">
            <strong>Uploaded.</strong> <code>{uploaded.name}</code> · {uploaded.contentType}
            {uploaded.fileType ? ` · ${uploaded.fileType}` : ""} · <Time at={uploaded.createdAt} />
            {uploaded.createdBy ? (
              <span title={uploaded.createdBy}> by {describePrincipal(uploaded.createdBy)}</span>
            ) : null}
            . The service checked its SHA-256.
          </div>
        )}
        {downloaded && (
          <div class="result result-ok" role="status" data-testid="download-result">
            <strong>Saved</strong> to <code>{downloaded.path}</code> ({formatBytes(downloaded.size)}). SHA-256{" "}
            <code class="hash">{downloaded.sha256}</code>
          </div>
        )}
        {fwError !== null && <ErrorBox error={fwError} />}
        <div class="dialog-actions">
          {firmwareName ? (
            <button type="button" class="button" onClick={() => download("firmware")} disabled={!!fw.running} data-testid="download-firmware">
              Download…
            </button>
          ) : (
            <button
              type="button"
              class="button button-primary"
              onClick={upload}
              disabled={!staged?.hash || !!fw.running}
              data-testid="upload-firmware"
            >
              Upload…
            </button>
          )}
        </div>
      </section>

      <section class="files-section" aria-labelledby="notes-title">
        <h3 id="notes-title">Release notes</h3>
        <p data-testid="release-notes-name">
          {notesName ? <code>{notesName}</code> : <span class="muted">None yet.</span>}{" "}
          <span class="muted">Uploading new notes replaces the previous ones.</span>
        </p>
        {notes.running && <TransferBar progress={notes.running.progress} onCancel={notes.running.job != null ? notes.cancel : undefined} />}
        {notesInfo && (
          <p class="muted" role="status">
            {notesInfo}
          </p>
        )}
        {notesError !== null && <ErrorBox error={notesError} />}
        {notesText && <Markdown text={notesText.text} plain={!notesText.markdown} />}
        <div class="dialog-actions">
          <button type="button" class="button" onClick={uploadNotes} disabled={!!notes.running} data-testid="upload-notes">
            {notesName ? "Replace…" : "Upload…"}
          </button>
          {notesName && (
            <>
              <button type="button" class="button" onClick={viewNotes} data-testid="view-notes">
                View
              </button>
              <button type="button" class="button" onClick={() => download("notes")} disabled={!!notes.running}>
                Download…
              </button>
              <button type="button" class="button button-danger-quiet" onClick={deleteNotes} data-testid="delete-notes">
                Delete
              </button>
            </>
          )}
        </div>
      </section>

      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose} disabled={!!fw.running || !!notes.running} data-testid="close-files">
          Close
        </button>
      </div>
    </Modal>
  );
}
