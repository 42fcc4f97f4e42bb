// The one module the views use to reach Rust. It wraps the bindings generated from the Rust
// commands (bindings.ts) and turns a command's error result into a thrown, typed IpcError.

import * as b from "./bindings";
import { commands } from "./bindings";
import type { Channel } from "@tauri-apps/api/core";

// What Rust sends (the "Serialize" phase of each generated type) under plain names, and what
// it accepts (the "Deserialize" phase) where the two differ.
export type AppInfo = b.AppInfo_Serialize;
export type Code = b.Code;
export type CommandError = b.CommandError_Serialize;
export type Customer = b.Customer;
export type SetTargetReport = b.TestReport;
export type FieldError = b.FieldError;
export type FirmwareModule = b.FirmwareModule_Serialize;
export type FirmwarePackage = b.FirmwarePackage_Serialize;
export type CreatePackage = b.CreatePackage_Deserialize;
export type ModulePage = b.ModulePage_Serialize;
export type ModulePageRequest = b.ModulePageRequest_Deserialize;
export type PackagePageRequest = b.PackagePageRequest_Deserialize;
export type SpecificationSummary = b.SpecificationSummary_Serialize;
export type TransferProgress = b.TransferProgress_Serialize;
export type HashResult = b.HashResult;
export type FileAttributes = b.FileAttributes_Serialize;
export type Downloaded = b.Downloaded_Serialize;
export type Profile = b.Profile_Serialize;
export type ProfileDraft = b.ProfileDraft;
export type CustomerDraft = b.CustomerDraft;
export type ProfileList = b.ProfileList_Serialize;
export type ProfileSummary = b.ProfileSummary_Serialize;
export type SecretState = b.SecretState;
export type TokenCheck = b.TokenCheck_Serialize;
export type BindingKind = b.BindingKind;
export type BindingView = b.BindingView_Serialize;
export type BindingDraft = b.BindingDraft_Deserialize;
export type BindingPage = b.BindingPage_Serialize;
export type BindingPageRequest = b.BindingPageRequest_Deserialize;
export type DeviceSummary = b.DeviceEntry_Serialize;
export type DeviceLabelInfo = b.DeviceLabel_Serialize;
export type ItemOutcome = b.ItemOutcome_Serialize;
export type DevicePage = b.DevicePage_Serialize;
export type DeviceIdCheck = b.DeviceIdCheck_Serialize;
export type DownlinkKind = b.DownlinkKind;
export type KindInfo = b.KindInfo;
export type DownlinkView = b.DownlinkView_Serialize;
export type ModuleDetail = b.ModuleDetail_Serialize;
export type FirmwareState = b.FirmwareState_Serialize;
export type StatePage = b.StatePage_Serialize;
export type ModuleStatesRequest = b.ModuleStatesRequest_Deserialize;
export type BetaDownlinkDraft = b.BetaDownlinkDraft_Deserialize;
export type BetaDownlinkAnswer = b.BetaDownlinkAnswer;
export type DownlinkDetail = b.DownlinkDetail_Serialize;
export type DownlinkPage = b.DownlinkPage_Serialize;
export type DownlinkPageRequest = b.DownlinkPageRequest_Deserialize;
export type DownlinkPreview = b.DownlinkPreview_Serialize;
export type Observation = b.Observation_Serialize;
export type Outcome = b.Outcome;
export type ActuatorDraft = b.ActuatorDraft_Serialize;
export type MethodDraft = b.MethodDraft_Serialize;
export type MethodVariant = b.MethodVariant;
export type ValueType = b.ValueType;
export type ConnectionDraft = b.ConnectionDraft_Serialize;
export type PayloadMode = b.PayloadMode;
export type FleetStatus = b.FleetStatus_Serialize;
export type FleetHome = b.FleetHome;
export type ModuleSummary = b.ModuleSummary;
export type ModuleOverview = b.ModuleOverview;
export type Count = b.Count;
export type FailureGroup = b.FailureGroup;
export type CustomerScope = b.CustomerScope;
export type CustomerSummary = b.CustomerSummary;
export type DeviceQuery = b.DeviceQuery_Deserialize;
export type DeviceRow = b.DeviceRow;
export type Selection = b.Selection;
export type HistoryPoint = b.HistoryPoint;
export type FleetHealth = b.FleetHealth_Serialize;
export type FailureReason = b.FailureReason_Serialize;
export type WaveStart = b.WaveStart;
export type RolloutPlan = b.RolloutPlan_Deserialize;
export type DeviceChoice = b.DeviceChoice_Deserialize;
export type PlanPreview = b.PlanPreview;
export type RolloutView = b.RolloutView_Serialize;
export type WaveView = b.WaveView;
export type WaveBudget = b.WaveBudget;
export type RolloutCounts = b.RolloutCounts;
export type ScanProgress = b.ScanProgress;
export type ScanReport = b.ScanReport;

/** A failed command: carries the serialised CommandError so views can branch on `code`. */
export class IpcError extends Error {
  constructor(readonly detail: CommandError) {
    super(detail.message);
    this.name = "IpcError";
  }
  get code(): Code {
    return this.detail.code;
  }
  /** The form field the error concerns, if any. */
  get field(): string | null {
    return this.detail.field;
  }
}

type Result<T> = { status: "ok"; data: T } | { status: "error"; error: CommandError };

async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const r = await call;
  if (r.status === "error") throw new IpcError(r.error);
  return r.data;
}

export const ipc = {
  appInfo: () => unwrap(commands.appInfo()),
  actAs: (customer: string | null) => unwrap(commands.actAs(customer)),
  activateProfile: (name: string) => unwrap(commands.activateProfile(name)),
  listProfiles: () => unwrap(commands.listProfiles()),
  checkProfile: (draft: ProfileDraft, isNew: boolean) => unwrap(commands.checkProfile(draft, isNew)),
  saveProfile: (draft: ProfileDraft, secret: string | null, isNew: boolean) =>
    unwrap(commands.saveProfile({ draft, secret, isNew })),
  deleteProfile: (name: string) => unwrap(commands.deleteProfile(name)),
  testProfile: (draft: ProfileDraft, secret: string | null) => unwrap(commands.testProfile({ draft, secret })),
  testStoredProfile: (name: string) => unwrap(commands.testStoredProfile(name)),
  testSetTarget: (request: b.TestSetTarget) => unwrap(commands.testSetTarget(request)),
  listModules: (request: ModulePageRequest) => unwrap(commands.listModules(request)),
  checkPackage: (request: CreatePackage) => commands.checkPackage(request),
  createPackage: (request: CreatePackage) => unwrap(commands.createPackage(request)),
  listPackages: (request: PackagePageRequest) => unwrap(commands.listPackages(request)),
  listSpecifications: () => unwrap(commands.listSpecifications()),
  getPackage: (packageId: string) => unwrap(commands.getPackage(packageId)),
  getModule: (moduleId: string) => unwrap(commands.getModule(moduleId)),
  listModuleStates: (request: ModuleStatesRequest) => unwrap(commands.listModuleStates(request)),
  checkBetaDownlink: (draft: BetaDownlinkDraft) => commands.checkBetaDownlink(draft),
  sendBetaDownlink: (draft: BetaDownlinkDraft, actingFor: string | null) =>
    unwrap(commands.sendBetaDownlink({ draft, actingFor })),
  updatePackageDescription: (packageId: string, description: string | null, actingFor: string | null) =>
    unwrap(commands.updatePackageDescription({ packageId, description, actingFor })),
  deletePackage: (packageId: string, actingFor: string | null) => unwrap(commands.deletePackage({ packageId, actingFor })),
  /** A native open dialog opened by Rust: the path it answers is the only kind the file commands accept. */
  pickFile: (dialog: b.FileDialog) => unwrap(commands.pickFile(dialog)),
  /** A native save dialog opened by Rust: its path is the only kind downloads and exports write to. */
  pickSaveFile: (dialog: b.FileDialog) => unwrap(commands.pickSaveFile(dialog)),
  hashFile: (path: string, ch: Channel<TransferProgress>) => unwrap(commands.hashFile(path, ch as never)),
  /** `sha256`: the checksum shown for the file (from `hashFile`); Rust then does not hash it again. */
  uploadFirmwareFile: (packageId: string, path: string, actingFor: string | null, sha256: string | null, ch: Channel<TransferProgress>) =>
    unwrap(commands.uploadFirmwareFile({ packageId, path, actingFor, fileName: null, contentType: null, sha256 }, ch as never)),
  uploadReleaseNotes: (packageId: string, path: string, actingFor: string | null, ch: Channel<TransferProgress>) =>
    unwrap(commands.uploadReleaseNotes({ packageId, path, actingFor, fileName: null, contentType: null, sha256: null }, ch as never)),
  checksumFirmwareFile: (packageId: string, ch: Channel<TransferProgress>) => unwrap(commands.checksumFirmwareFile(packageId, ch as never)),
  downloadFirmwareFile: (packageId: string, target: string, ch: Channel<TransferProgress>) =>
    unwrap(commands.downloadFirmwareFile({ packageId, target }, ch as never)),
  downloadReleaseNotes: (packageId: string, target: string, ch: Channel<TransferProgress>) =>
    unwrap(commands.downloadReleaseNotes({ packageId, target }, ch as never)),
  readReleaseNotes: (packageId: string) => unwrap(commands.readReleaseNotes(packageId)),
  deleteReleaseNotes: (packageId: string, actingFor: string | null) =>
    unwrap(commands.deleteReleaseNotes({ packageId, actingFor })),
  cancelTransfer: (job: number) => commands.cancelTransfer(job),
  listBindings: (kind: BindingKind, request: BindingPageRequest) => unwrap(commands.listBindings(kind, request)),
  getBinding: (kind: BindingKind, id: string) => unwrap(commands.getBinding(kind, id)),
  checkBinding: (draft: BindingDraft, editing: boolean) => commands.checkBinding(draft, editing),
  generateBindingSecret: (kind: BindingKind) => unwrap(commands.generateBindingSecret(kind)),
  revealBindingSecret: (kind: BindingKind, id: string) => unwrap(commands.revealBindingSecret(kind, id)),
  copyBindingSecret: (kind: BindingKind, id: string) => unwrap(commands.copyBindingSecret(kind, id)),
  createBinding: (draft: BindingDraft, actingFor: string | null) => unwrap(commands.createBinding({ draft, actingFor })),
  updateBinding: (id: string, draft: BindingDraft, actingFor: string | null) =>
    unwrap(commands.updateBinding({ id, draft, actingFor })),
  deleteBinding: (kind: BindingKind, id: string, actingFor: string | null) =>
    unwrap(commands.deleteBinding({ kind, id, actingFor })),
  deleteBindings: (kind: BindingKind, ids: string[], actingFor: string | null) =>
    unwrap(commands.deleteBindings({ kind, ids, actingFor })),
  exportBindingsCsv: (kind: BindingKind, request: BindingPageRequest, path: string) =>
    unwrap(commands.exportBindingsCsv(kind, request, path)),
  syncLoraBinding: (id: string, actingFor: string | null) => unwrap(commands.syncLoraBinding({ id, actingFor })),
  listDevices: (search: string | null, page: number, pageSize: number) =>
    unwrap(commands.listDevices({ search, page, pageSize })),
  checkDeviceId: (input: string, kind: string | null) => commands.checkDeviceId(input, kind),
  /** What the service's device list says of each id (name, IMEI/DevEUI, UUID); at most 500. */
  deviceLabels: (ids: string[]) => unwrap(commands.deviceLabels(ids)),
  downlinkKinds: () => commands.downlinkKinds(),
  previewDownlink: (draft: ActuatorDraft) => commands.previewDownlink(draft),
  previewConnectionDownlink: (draft: ConnectionDraft) => commands.previewConnectionDownlink(draft),
  listDownlinks: (request: DownlinkPageRequest) => unwrap(commands.listDownlinks(request)),
  getDownlink: (kind: DownlinkKind, id: string) => unwrap(commands.getDownlink(kind, id)),
  sendDownlink: (draft: ActuatorDraft, actingFor: string | null) => unwrap(commands.sendDownlink({ draft, actingFor })),
  sendConnectionDownlink: (draft: ConnectionDraft, actingFor: string | null) =>
    unwrap(commands.sendConnectionDownlink({ draft, actingFor })),
  cancelDownlink: (kind: DownlinkKind, id: string, forced: boolean, actingFor: string | null) =>
    unwrap(commands.cancelDownlink({ kind, id, forced, actingFor })),
  cancelDownlinks: (items: b.CancelItem[], actingFor: string | null) => unwrap(commands.cancelDownlinks({ items, actingFor })),
  exportDownlinksCsv: (request: DownlinkPageRequest, path: string) => unwrap(commands.exportDownlinksCsv(request, path)),
  fleetStatus: () => unwrap(commands.fleetStatus()),
  fleetHome: () => unwrap(commands.fleetHome()),
  fleetScan: (full: boolean) => unwrap(commands.fleetScan(full)),
  fleetCancelScan: () => unwrap(commands.fleetCancelScan()),
  fleetSetRefresh: (intervalSeconds: number, auto: boolean) => unwrap(commands.fleetSetRefresh(intervalSeconds, auto)),
  fleetOverview: (moduleId: string) => unwrap(commands.fleetOverview(moduleId)),
  fleetCount: (query: DeviceQuery) => unwrap(commands.fleetCount(query)),
  fleetRows: (query: DeviceQuery, offset: number, limit: number) => unwrap(commands.fleetRows(query, offset, limit)),
  fleetExportCsv: (query: DeviceQuery, selection: Selection | null, path: string) =>
    unwrap(commands.fleetExportCsv(query, selection, path)),
  fleetHistory: (moduleId: string, hours: number | null) => unwrap(commands.fleetHistory(moduleId, hours)),
  fleetWaveStarts: (moduleId: string, hours: number | null) => unwrap(commands.fleetWaveStarts(moduleId, hours)),
  /** The active scope at a glance (Home): states per status, devices, drift, failures by reason. */
  fleetHealth: () => unwrap(commands.fleetHealth()),
  rolloutPreview: (plan: RolloutPlan) => unwrap(commands.rolloutPreview(plan)),
  rolloutStart: (plan: RolloutPlan, actingFor: string | null) => unwrap(commands.rolloutStart(plan, actingFor)),
  rollouts: () => unwrap(commands.rollouts()),
  /** Running and paused rollouts of the active profile and customer (for the nav and status bar). */
  rolloutCounts: () => unwrap(commands.rolloutCounts()),
  rolloutPause: (id: string, actingFor: string | null) => unwrap(commands.rolloutPause(id, actingFor)),
  rolloutResume: (id: string, success: number | null, error: number | null, actingFor: string | null) =>
    unwrap(commands.rolloutResume(id, success, error, actingFor)),
  rolloutUnfinished: (id: string) => unwrap(commands.rolloutUnfinished(id)),
  rolloutAbort: (id: string, resetUnfinished: boolean, actingFor: string | null) =>
    unwrap(commands.rolloutAbort(id, resetUnfinished, actingFor)),
};

/** A message for people from anything a command may throw. */
export function errorMessage(e: unknown): string {
  if (e instanceof IpcError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
