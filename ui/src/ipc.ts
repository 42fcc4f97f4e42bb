// The one module the views use to reach Rust: `ipc.someCommand(...)` is the generated command of
// the same name (bindings.ts, from the Rust commands), with its error result turned into a
// thrown, typed IpcError. Nothing here names a command: a new Rust command is callable as soon
// as bindings.ts is regenerated. Every generated type is re-exported under its generated name.

import { commands } from "./bindings";
import type * as b from "./bindings";
import type { Channel } from "@tauri-apps/api/core";

export type * from "./bindings";

// Where a type's serde shape differs by direction, bindings.ts names both phases (`X_Serialize`,
// what Rust sends; `X_Deserialize`, what it accepts) and its plain `X` is their union. The views
// read what Rust sends, so for the types they read the plain name means the sent shape. A
// request type keeps the union: a sent shape is always an accepted one.
export type ActuatorDraft = b.ActuatorDraft_Serialize;
export type AppInfo = b.AppInfo_Serialize;
export type BindingView = b.BindingView_Serialize;
export type ConnectionDraft = b.ConnectionDraft_Serialize;
export type DeviceEntry = b.DeviceEntry_Serialize;
export type DeviceIdCheck = b.DeviceIdCheck_Serialize;
export type DeviceLabel = b.DeviceLabel_Serialize;
export type DownlinkDetail = b.DownlinkDetail_Serialize;
export type DownlinkPreview = b.DownlinkPreview_Serialize;
export type DownlinkView = b.DownlinkView_Serialize;
export type Downloaded = b.Downloaded_Serialize;
export type FileAttributes = b.FileAttributes_Serialize;
export type FirmwareModule = b.FirmwareModule_Serialize;
export type FirmwarePackage = b.FirmwarePackage_Serialize;
export type FirmwareState = b.FirmwareState_Serialize;
export type FleetHealth = b.FleetHealth_Serialize;
export type FleetStatus = b.FleetStatus_Serialize;
export type ItemOutcome = b.ItemOutcome_Serialize;
export type MethodDraft = b.MethodDraft_Serialize;
export type ModuleDetail = b.ModuleDetail_Serialize;
export type Profile = b.Profile_Serialize;
export type ProfileList = b.ProfileList_Serialize;
export type ProfileSummary = b.ProfileSummary_Serialize;
export type RolloutView = b.RolloutView_Serialize;
export type Hold = b.Hold_Serialize;
export type Schedule = b.Schedule_Serialize;
export type Window = b.Window_Serialize;
export type RetryPolicy = b.RetryPolicy_Serialize;
export type SpecificationSummary = b.SpecificationSummary_Serialize;
export type StatePage = b.StatePage_Serialize;
export type TestReport = b.TestReport_Serialize;
export type TokenCheck = b.TokenCheck_Serialize;
export type TransferProgress = b.TransferProgress_Serialize;
export type UpdateCheck = b.UpdateCheck_Serialize;
export type UpdateProgress = b.UpdateProgress_Serialize;
export type UpdateStatus = b.UpdateStatus_Serialize;

/** A failed command: carries the serialised CommandError so views can branch on `code`. */
export class IpcError extends Error {
  constructor(readonly detail: b.CommandError_Serialize) {
    super(detail.message);
    this.name = "IpcError";
  }
  get code(): b.Code {
    return this.detail.code;
  }
  /** The form field the error concerns, if any. */
  get field(): string | null {
    return this.detail.field;
  }
}

type Commands = typeof commands;
type Outcome<T> = { status: "ok"; data: T } | { status: "error"; error: b.CommandError_Serialize };

/** What a command answers: a `Result` command's data (its error is thrown), else the value itself. */
type Answer<R> = [R] extends [Outcome<infer T>] ? T : R;

/** A command's arguments. Rust sends a channel's messages, yet tauri-specta types the channel with
 * the accepted shape (`X_Deserialize`, defaulted fields optional): a channel of the sent shape
 * (those fields present) is taken too. */
type Args<P extends unknown[]> = { [I in keyof P]: P[I] extends Channel<infer M> ? Channel<M> | Channel<Required<M>> : P[I] };

/** Each generated command with the same arguments, answering its data or throwing IpcError. */
export type Ipc = {
  [K in keyof Commands]: (...args: Args<Parameters<Commands[K]>>) => Promise<Answer<Awaited<ReturnType<Commands[K]>>>>;
};

/** True for what tauri-specta's `typedError` makes of a `Result` command's answer, and only that. */
function isOutcome(r: unknown): r is Outcome<unknown> {
  if (typeof r !== "object" || r === null || Object.keys(r).length !== 2) return false;
  const o = r as Record<string, unknown>;
  return (o.status === "ok" && "data" in o) || (o.status === "error" && "error" in o);
}

function unwrap(r: unknown): unknown {
  if (!isOutcome(r)) return r;
  if (r.status === "error") throw new IpcError(r.error);
  return r.data;
}

export const ipc = Object.fromEntries(
  Object.entries(commands).map(([name, call]) => [
    name,
    (...args: unknown[]) => (call as (...a: unknown[]) => Promise<unknown>)(...args).then(unwrap),
  ]),
) as Ipc;

/** A message for people from anything a command may throw. */
export function errorMessage(e: unknown): string {
  if (e instanceof IpcError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
