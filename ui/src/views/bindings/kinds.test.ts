import { describe, expect, it } from "vitest";
import type { BindingView } from "../../ipc";
import { editImpact, editorFrom, NO_FILTERS, pageRequest, toDraft } from "./kinds";

const lora: BindingView = {
  kind: "lora",
  id: "b1",
  deviceId: "0f8fad5b-d9cb-469f-a165-70867728950e",
  applicationServerId: "0011223344556677",
  status: "ACTIVE",
  type: null,
  username: null,
  hasSecret: true,
  createdAt: null,
  createdBy: null,
  modifiedAt: null,
  modifiedBy: null,
};

describe("pageRequest", () => {
  it("sends only the kind's own filters, trimmed, and none when empty", () => {
    const f = { ...NO_FILTERS, deviceId: " imei:350000000000001 ", type: "http-senml", username: "urn:dev:imei:1:" };
    const http = pageRequest("http", f, "-createdAt", null);
    expect(http.deviceId).toBe("imei:350000000000001");
    expect(http.type).toBe("http-senml");
    expect(http.username).toBeNull();
    const mqtt = pageRequest("mqtt", f, null, null);
    expect(mqtt.type).toBeNull();
    expect(mqtt.username).toBe("urn:dev:imei:1:");
    expect(pageRequest("lora", NO_FILTERS, null, "next-link").clientId).toBeNull();
  });
});

describe("toDraft", () => {
  it("keeps the stored secret on an edit when nothing was typed", () => {
    const s = editorFrom(lora);
    expect(toDraft("lora", s, true).secret).toBeNull();
    expect(toDraft("lora", s, false).secret).toBe("");
    expect(toDraft("lora", { ...s, secret: "ab" }, true).secret).toBe("ab");
    expect(toDraft("lora", s, true).type).toBeNull();
  });
});

describe("editImpact", () => {
  it("says a LoRa key, server or device change makes the device join again", () => {
    const same = editImpact("lora", lora, editorFrom(lora));
    expect(same.disruptive).toBe(false);
    const key = editImpact("lora", lora, { ...editorFrom(lora), secret: "00112233445566778899aabbccddeeff" });
    expect(key.disruptive).toBe(true);
    expect(key.consequence).toContain("INVENTORY");
    expect(key.changes).toEqual(["replaces the app key"]);
    // The service stores hex in lower case: the same server in upper case is no change.
    expect(editImpact("lora", lora, { ...editorFrom(lora), applicationServerId: "0011223344556677".toUpperCase() }).disruptive).toBe(false);
    expect(editImpact("lora", lora, { ...editorFrom(lora), applicationServerId: "0011223344556678" }).disruptive).toBe(true);
  });

  it("says a new MQTT password or another device cuts the device off, a new HTTP type does not", () => {
    const mqtt: BindingView = { ...lora, kind: "mqtt", applicationServerId: null, status: null, username: "urn:dev:imei:1:" };
    const pw = editImpact("mqtt", mqtt, { ...editorFrom(mqtt), secret: "x" });
    expect(pw.disruptive).toBe(true);
    expect(pw.consequence).toContain("logins");
    const moved = editImpact("mqtt", mqtt, { ...editorFrom(mqtt), deviceId: "imei:350000000000002" });
    expect(moved.consequence).toContain("old device");
    const http: BindingView = { ...mqtt, kind: "http", username: null, type: "http-senml" };
    const retyped = editImpact("http", http, { ...editorFrom(http), type: "http-streamline" });
    expect(retyped.disruptive).toBe(false);
    expect(retyped.changes).toEqual(["changes the type to http-streamline"]);
  });
});
