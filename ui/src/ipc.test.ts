import { beforeEach, describe, expect, it, vi } from "vitest";

// The generated commands call Tauri's `invoke`; here it answers what each test says.
const invoke = vi.hoisted(() => vi.fn());
vi.mock("@tauri-apps/api/core", () => ({ invoke, Channel: class {} }));

import { IpcError, errorMessage, ipc } from "./ipc";
import { commands } from "./bindings";

const refusal = { code: "invalid", message: "the name is taken", field: "name" };

describe("ipc", () => {
  beforeEach(() => invoke.mockReset());

  it("has every generated command, under its own name", () => {
    expect(Object.keys(ipc).sort()).toEqual(Object.keys(commands).sort());
  });

  it("answers a Result command's data, calling the Rust command with the same arguments", async () => {
    invoke.mockResolvedValueOnce({ items: [], page: 0, last: true });
    await expect(ipc.listDevices({ search: "abc", page: 0, pageSize: 50 })).resolves.toEqual({ items: [], page: 0, last: true });
    expect(invoke).toHaveBeenCalledWith("list_devices", { request: { search: "abc", page: 0, pageSize: 50 } });
  });

  it("throws a Result command's error as an IpcError carrying the CommandError", async () => {
    invoke.mockRejectedValueOnce(refusal);
    const e = await ipc.deleteProfile("p").catch((e: unknown) => e);
    expect(e).toBeInstanceOf(IpcError);
    expect((e as IpcError).detail).toEqual(refusal);
    expect((e as IpcError).code).toBe("invalid");
    expect((e as IpcError).field).toBe("name");
    expect(errorMessage(e)).toBe("the name is taken");
  });

  it("answers a command without an error type as it is", async () => {
    invoke.mockResolvedValueOnce([{ field: "moduleId", message: "is required" }]);
    await expect(ipc.checkPackage({} as never)).resolves.toEqual([{ field: "moduleId", message: "is required" }]);
    invoke.mockResolvedValueOnce(true);
    await expect(ipc.cancelTransfer(3)).resolves.toBe(true);
  });

  it("passes a JavaScript failure on unchanged", async () => {
    invoke.mockRejectedValueOnce(new TypeError("broken"));
    await expect(ipc.appInfo()).rejects.toThrow(TypeError);
  });
});
