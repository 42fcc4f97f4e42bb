import { describe, expect, it } from "vitest";
import type { DeviceLabel } from "../ipc";
import { LabelStore, MAX_IDS, deviceText, deviceTitle, displayId, networkText } from "./deviceLabels";

const known = (id: string, name: string, extra: Partial<DeviceLabel> = {}): DeviceLabel => ({
  id,
  known: true,
  uuid: "0f8fad5b-d9cb-469f-a165-70867728950e",
  name,
  description: null,
  imei: null,
  devEui: null,
  ...extra,
});
const unknown = (id: string): DeviceLabel => ({ id, known: false, uuid: null, name: null, description: null, imei: null, devEui: null });
const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

describe("device labels", () => {
  it("say a device by name with its network id, and an unknown one by its id without the URN's trailing colon", () => {
    const l = known("urn:dev:imei:354000000000001:", "T1-00001", { imei: "354000000000001" });
    expect(networkText(l)).toBe("IMEI 354000000000001");
    expect(deviceText(l.id, l)).toBe("T1-00001 (IMEI 354000000000001)");
    expect(deviceText("urn:dev:deveui:70b3d57ed0000002:", unknown("x"))).toBe("urn:dev:deveui:70b3d57ed0000002");
    expect(deviceText("urn:dev:deveui:70b3d57ed0000002:", null)).toBe("urn:dev:deveui:70b3d57ed0000002");
    expect(displayId("imei:354000000000001")).toBe("imei:354000000000001");
    expect(networkText({ imei: null, devEui: "70b3d57ed0000002" })).toBe("DevEUI 70b3d57ed0000002");
    const title = deviceTitle(l.id, l);
    expect(title).toContain("UUID 0f8fad5b-d9cb-469f-a165-70867728950e");
    expect(title).toContain("Id: urn:dev:imei:354000000000001:");
    expect(deviceTitle("junk", unknown("junk"))).toContain("Not in the service's device list");
  });

  it("ask for the ids of one moment in one call, each once, in chunks Rust takes", async () => {
    const calls: string[][] = [];
    const s = new LabelStore(async (ids) => {
      calls.push(ids);
      return ids.map((id) => (id === "a" ? known("a", "Alpha") : unknown(id)));
    }, 1);
    const heard: string[] = [];
    s.want("a", () => heard.push("a"));
    s.want("b", () => heard.push("b"));
    s.want("a", () => heard.push("a2"));
    await tick();
    expect(calls).toEqual([["a", "b"]]);
    expect(s.get("a")?.name).toBe("Alpha");
    expect(s.get("b")?.known).toBe(false);
    expect(heard.sort()).toEqual(["a", "a2", "b"]);
    s.want("a", () => {});
    await tick();
    expect(calls.length).toBe(1);

    const many = Array.from({ length: MAX_IDS + 3 }, (_, i) => `id-${i}`);
    many.forEach((id) => s.want(id, () => {}));
    await tick();
    expect(calls.slice(1).map((c) => c.length)).toEqual([MAX_IDS, 3]);
  });

  it("forget every answer when the profile or customer changes, and drop answers of the old scope", async () => {
    let release: () => void = () => {};
    const s = new LabelStore(
      (ids) =>
        new Promise((r) => {
          release = () => r(ids.map((id) => known(id, "Old")));
        }),
      1,
    );
    s.setScope("p|");
    s.want("a", () => {});
    await tick();
    s.setScope("p|customer");
    release();
    await tick();
    expect(s.get("a")).toBeNull();
  });
});
