import { ipc } from "../ipc";
import { deviceText, deviceTitle, displayId, labelStore, networkText, useLabel } from "../lib/deviceLabels";
import { useNavigate } from "../navigate";
import { useSession } from "../session";
import { useState } from "preact/hooks";
import "./DeviceLabel.css";

const store = () => labelStore((ids) => ipc.deviceLabels(ids));

/** What is known of `id` now, if it was asked for already (for a sentence outside render). */
export function knownLabel(id: string) {
  return store().get(id);
}

/** The label of a device id from the shared store (for sentences: `deviceText(id, label)`). */
export function useDeviceLabel(id: string) {
  const { info } = useSession();
  return useLabel(store(), `${info?.profile ?? ""}|${info?.acting?.id ?? ""}`, id);
}

/**
 * A device as the operator knows it: its name, with its IMEI or DevEUI beside it in small
 * text, and its UUID in the tooltip with a copy button. A device the service's list does not
 * hold stays shown by its id. One line; `inline` for use inside a sentence.
 */
export function DeviceLabel({ id, inline = false, copy = true }: { id: string; inline?: boolean; copy?: boolean }) {
  const label = useDeviceLabel(id);
  const nav = useNavigate();
  const known = !!(label?.known && label.name);
  const net = label && known ? networkText(label) : null;
  const copyText = label?.uuid ?? id;
  return (
    <span
      class={inline ? "device-label device-label-inline" : "device-label"}
      title={deviceTitle(id, label)}
      data-testid="device-label"
      data-id={id}
      data-known={label ? String(known) : undefined}
      data-uuid={label?.uuid ?? undefined}
    >
      {known ? (
        <>
          <span class="dl-name" data-testid="device-name">
            {label.name}
          </span>
          {net && <span class="dl-net">{net}</span>}
        </>
      ) : (
        <code class="dl-id">{displayId(id)}</code>
      )}
      {copy && <CopyButton text={copyText} what={label?.uuid ? "the device's UUID" : "the device id"} />}
      {copy && nav && <OpenDeviceButton onOpen={() => nav.openDevice(label?.uuid ?? id)} />}
    </span>
  );
}

/** Opens the device's page (where the label stands in a table or a detail, not in a sentence). */
function OpenDeviceButton({ onOpen }: { onOpen: () => void }) {
  return (
    <button
      type="button"
      class="dl-copy dl-open"
      title="Open the device page"
      aria-label="Open the device page"
      data-testid="open-device"
      onClick={(e) => {
        e.stopPropagation();
        onOpen();
      }}
    >
      <svg viewBox="0 0 16 16" aria-hidden="true">
        <path d="M9 2h5v5M14 2L7 9M12 10v3a1 1 0 0 1-1 1H3a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1h3" fill="none" stroke="currentColor" stroke-width="1.5" />
      </svg>
    </button>
  );
}

/** Puts `text` on the clipboard; says so for a moment. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="dl-copy"
      title={`Copy ${what}: ${text}`}
      aria-label={`Copy ${what}`}
      data-testid="copy-device-id"
      onClick={async (e) => {
        e.stopPropagation();
        if (await copyToClipboard(text)) {
          setDone(true);
          setTimeout(() => setDone(false), 1200);
        }
      }}
    >
      {done ? (
        <svg viewBox="0 0 16 16" aria-hidden="true">
          <path d="M3 8.5l3 3 7-7" fill="none" stroke="currentColor" stroke-width="2" />
        </svg>
      ) : (
        <svg viewBox="0 0 16 16" aria-hidden="true">
          <rect x="5" y="5" width="9" height="9" rx="1.5" fill="none" stroke="currentColor" stroke-width="1.5" />
          <path d="M11 3.5V3a1 1 0 0 0-1-1H3a1 1 0 0 0-1 1v7a1 1 0 0 0 1 1h.5" fill="none" stroke="currentColor" stroke-width="1.5" />
        </svg>
      )}
    </button>
  );
}

async function copyToClipboard(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

export { deviceText };
