// What the binding screens say about each kind, the list filters as typed, and what an edit
// will do to a device. No validation rule lives here: the editor asks Rust (check_binding).

import type { BindingDraft, BindingKind, BindingPageRequest, BindingView } from "../../ipc";
import { serviceTime } from "../../lib/timeWindow";

export type KindInfo = {
  id: BindingKind;
  label: string;
  /** The field that holds the kind's secret, as the service names it. */
  secretField: "appKey" | "sharedSecret" | "password";
  secretLabel: string;
  /** Rust can make one up (MQTT password, HTTP shared secret); a LoRa key is the device's. */
  canGenerate: boolean;
};

export const KINDS: KindInfo[] = [
  { id: "lora", label: "LoRa", secretField: "appKey", secretLabel: "App key", canGenerate: false },
  { id: "http", label: "HTTP", secretField: "sharedSecret", secretLabel: "Shared secret", canGenerate: true },
  { id: "mqtt", label: "MQTT", secretField: "password", secretLabel: "Password", canGenerate: true },
];

export function kindInfo(kind: BindingKind): KindInfo {
  return KINDS.find((k) => k.id === kind)!;
}

export const HTTP_TYPES = ["http-streamline", "http-senml"] as const;

/** The list filters of section 4.4 as typed (Rust checks them); `type` is HTTP's, `username` MQTT's. */
export type BindingFilters = {
  deviceId: string;
  clientId: string;
  createdSince: string;
  createdBefore: string;
  modifiedSince: string;
  modifiedBefore: string;
  type: string;
  username: string;
};

export const NO_FILTERS: BindingFilters = {
  deviceId: "",
  clientId: "",
  createdSince: "",
  createdBefore: "",
  modifiedSince: "",
  modifiedBefore: "",
  type: "",
  username: "",
};

export function hasFilters(f: BindingFilters): boolean {
  return Object.values(f).some((v) => v.trim() !== "");
}

const orNull = (s: string) => (s.trim() === "" ? null : s.trim());

/** The first-page request of `kind` for the filters: only the kind's own filters are sent. */
export function pageRequest(kind: BindingKind, f: BindingFilters, sort: string | null, next: string | null): BindingPageRequest {
  return {
    next,
    sort,
    clientId: orNull(f.clientId),
    deviceId: orNull(f.deviceId),
    createdBefore: serviceTime(f.createdBefore),
    createdSince: serviceTime(f.createdSince),
    modifiedBefore: serviceTime(f.modifiedBefore),
    modifiedSince: serviceTime(f.modifiedSince),
    type: kind === "http" ? orNull(f.type) : null,
    username: kind === "mqtt" ? orNull(f.username) : null,
    limit: null,
  };
}

/** What the editor holds. `secret` is what was typed: empty on an edit keeps the stored one. */
export type EditorState = { deviceId: string; applicationServerId: string; type: string; secret: string };

export function emptyEditor(): EditorState {
  return { deviceId: "", applicationServerId: "", type: "http-streamline", secret: "" };
}

export function editorFrom(b: BindingView): EditorState {
  return { deviceId: b.deviceId, applicationServerId: b.applicationServerId ?? "", type: b.type ?? "http-streamline", secret: "" };
}

/** The draft Rust checks and sends; on an edit an empty secret is `null`: keep the stored one. */
export function toDraft(kind: BindingKind, s: EditorState, editing: boolean): BindingDraft {
  return {
    kind,
    deviceId: s.deviceId,
    applicationServerId: kind === "lora" ? s.applicationServerId : null,
    type: kind === "http" ? s.type : null,
    secret: editing && s.secret === "" ? null : s.secret,
  };
}

export type EditImpact = {
  /** What the edit changes, in words. */
  changes: string[];
  /** The device loses its connection until it is reconfigured or joins again. */
  disruptive: boolean;
  /** What a disruptive edit means for the device. */
  consequence: string | null;
};

/** What replacing `before` with the editor's state does (A-64: LoRa keys or device reset to INVENTORY). */
export function editImpact(kind: BindingKind, before: BindingView, s: EditorState): EditImpact {
  const changes: string[] = [];
  const info = kindInfo(kind);
  const device = s.deviceId.trim();
  const moved = device !== before.deviceId;
  if (moved) changes.push(`moves the binding from device ${before.deviceId} to ${device}`);
  const asid = kind === "lora" && s.applicationServerId.trim().toLowerCase() !== (before.applicationServerId ?? "");
  if (asid) changes.push(`changes the application server to ${s.applicationServerId.trim()}`);
  const secret = s.secret !== "";
  if (secret) changes.push(`replaces the ${info.secretLabel.toLowerCase()}`);
  if (kind === "http" && s.type !== (before.type ?? "")) changes.push(`changes the type to ${s.type}`);
  if (changes.length === 0) changes.push("changes nothing the service stores (the binding is sent again as it is)");

  let consequence: string | null = null;
  if (kind === "lora" && (moved || asid || secret)) {
    consequence =
      "The status goes back to INVENTORY: the device must join the network again, and sends nothing until it has.";
  } else if (moved) {
    consequence = `The old device loses its ${info.label} binding and can no longer reach the platform through this connector.`;
  } else if (secret) {
    consequence = `The device must use the new ${info.secretLabel.toLowerCase()}: until it is reconfigured, its ${
      kind === "mqtt" ? "logins" : "uplinks"
    } are refused.`;
  }
  return { changes, disruptive: consequence !== null, consequence };
}
