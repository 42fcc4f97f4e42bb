import { describe, expect, it } from "vitest";
import { IpcError } from "../ipc";
import { actingLabel, byField, formatLifetime, placeError } from "./forms";

const err = (code: IpcError["code"], message: string, field: string | null) =>
  new IpcError({ code, message, field, status: null, problem: null });

describe("byField", () => {
  it("keeps the first rule of each field", () => {
    expect(
      byField([
        { field: "name", rule: "is required" },
        { field: "baseUrl", rule: "must be http" },
        { field: "name", rule: "second" },
      ]),
    ).toEqual({ name: "is required", baseUrl: "must be http" });
  });
});

describe("placeError", () => {
  it("puts an input error of a known field next to it, without repeating the field name", () => {
    const placed = placeError(err("invalid_input", "customers[1].label: is required", "customers[1].label"), [
      "customers[1].label",
    ]);
    expect(placed).toEqual({ fields: { "customers[1].label": "is required" }, general: null });
  });
  it("keeps service and unknown-field errors for the form as a whole", () => {
    const e = err("keychain", "no OS keychain is available", null);
    expect(placeError(e, ["name"])).toEqual({ fields: {}, general: e });
    const other = err("invalid_input", "secret: is required", "secret");
    expect(placeError(other, ["name"]).general).toBe(other);
  });
});

describe("actingLabel", () => {
  it("names the customer by label and id, or the own environment", () => {
    expect(actingLabel(null)).toBe("your own environment");
    expect(actingLabel({ id: "0f4c", label: "Northwind" })).toBe("customer Northwind (0f4c)");
    expect(actingLabel({ id: "0f4c", label: "" })).toBe("customer 0f4c");
  });
});

describe("formatLifetime", () => {
  it("reads as hours, minutes and seconds", () => {
    expect(formatLifetime(3600)).toBe("1 h");
    expect(formatLifetime(90)).toBe("1 min 30 s");
    expect(formatLifetime(0)).toBe("0 s");
  });
});
