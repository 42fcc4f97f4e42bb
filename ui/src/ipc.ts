// The one module the views use to reach Rust. It wraps the bindings generated from the Rust
// commands (bindings.ts) and turns a command's error result into a thrown, typed IpcError.

import * as b from "./bindings";
import { commands } from "./bindings";

// What Rust sends (the "Serialize" phase of each generated type) under plain names.
export type AppInfo = b.AppInfo;
export type ErrorCode = b.ErrorCode;
export type CommandError = b.CommandError_Serialize;
export type FirmwareModule = b.FirmwareModule_Serialize;
export type ModulePage = b.ModulePage_Serialize;
export type ModulePageRequest = b.ModulePageRequest_Deserialize;

/** A failed command: carries the serialised CommandError so views can branch on `code`. */
export class IpcError extends Error {
  constructor(readonly detail: CommandError) {
    super(detail.message);
    this.name = "IpcError";
  }
  get code(): ErrorCode {
    return this.detail.code;
  }
}

type Result<T> = { status: "ok"; data: T } | { status: "error"; error: CommandError };

async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const r = await call;
  if (r.status === "error") throw new IpcError(r.error);
  return r.data;
}

export const ipc = {
  appInfo: () => commands.appInfo(),
  listModules: (request: ModulePageRequest) => unwrap(commands.listModules(request)),
};

/** A message for people from anything a command may throw. */
export function errorMessage(e: unknown): string {
  if (e instanceof IpcError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
