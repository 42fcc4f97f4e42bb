import { describe, expect, it } from "vitest";
import { IpcError } from "../ipc";
import { actingLabel, byField, formatLifetime, placeError } from "./forms";

const err = (code: IpcError["code"], message: string, field: string | null) =>
  new IpcError({ code, message, field, fields: field ? [{ field, rule: message }] : [], status: null, problem: null });

/** A 400 of the service as the app gets it: every `invalidParams` entry in `fields`. */
const refusal = (fields: { field: string; rule: string }[], detail = "the request is invalid") =>
  new IpcError({
    code: "bad_request",
    message: `400 Bad Request: ${detail}`,
    field: fields[0]?.field ?? null,
    fields,
    status: 400,
    problem: { type: "about:blank", title: "Bad Request", status: 400, detail, invalidParams: [] },
  });

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

describe("placeError with the service's field errors", () => {
  it("puts every field the service names beside its field", () => {
    const e = refusal([
      { field: "firmwareVersion", rule: "already exists for this module" },
      { field: "description", rule: "contains a forbidden word" },
    ]);
    expect(placeError(e, ["firmwareVersion", "description"])).toEqual({
      fields: { firmwareVersion: "already exists for this module", description: "contains a forbidden word" },
      general: null,
    });
  });
  it("keeps the error for the form as a whole when a named field is not on the form", () => {
    const e = refusal([
      { field: "firmwareVersion", rule: "too long" },
      { field: "checksum", rule: "mismatch" },
    ]);
    const placed = placeError(e, ["firmwareVersion", "description"]);
    expect(placed.fields).toEqual({ firmwareVersion: "too long" });
    expect(placed.general).toBe(e);
  });
  it("reads a form field named in backticks or quotes in the detail of a refusal without invalidParams", () => {
    const e = refusal([], "`description` must not contain control characters");
    expect(placeError(e, ["firmwareVersion", "description"])).toEqual({
      fields: { description: "`description` must not contain control characters" },
      general: null,
    });
    const plain = refusal([], "the description is too long");
    expect(placeError(plain, ["description"])).toEqual({ fields: {}, general: plain });
    const other = refusal([], "'moduleId' is unknown");
    expect(placeError(other, ["description"]).general).toBe(other);
  });
  it("keeps only the first rule of a field named twice", () => {
    const e = refusal([
      { field: "port", rule: "must be an integer" },
      { field: "port", rule: "second" },
    ]);
    expect(placeError(e, ["port"]).fields).toEqual({ port: "must be an integer" });
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
