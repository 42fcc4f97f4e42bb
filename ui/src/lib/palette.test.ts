import { describe, expect, it } from "vitest";
import type { AppInfo, PaletteItem } from "../ipc";
import { actions, compose, fromItem, matchesWords, MAX_RECENT, validRecent, withRecent, type Entry } from "./palette";

const info = (acting: boolean): AppInfo => ({
  version: "1",
  profile: "p",
  simulator: true,
  baseUrl: "http://x",
  customers: [
    { id: "c1", label: "Acme Water" },
    { id: "c2", label: "Borealis Grid" },
  ],
  acting: acting ? { id: "c1", label: "Acme Water" } : null,
  deprecatedSubCustomerMode: false,
  notice: null,
});

const item = (kind: string, id: string, title: string, score = 10, subKind: string | null = null): PaletteItem => ({
  kind,
  id,
  title,
  detail: null,
  subKind,
  score,
});

describe("palette entries", () => {
  it("actions are matched by the starts of their words", () => {
    expect(matchesWords("new pack", "New package…")).toBe(true);
    expect(matchesWords("go roll", "Go to Rollouts")).toBe(true);
    expect(matchesWords("ackage", "New package…")).toBe(false);
    expect(matchesWords("", "anything")).toBe(true);
  });

  it("the customer switch offers the others and the own account while acting", () => {
    const own = actions(info(false)).filter((a) => a.target.kind === "customer");
    expect(own.map((a) => a.title)).toEqual(["Act for Acme Water", "Act for Borealis Grid"]);
    const acting = actions(info(true)).filter((a) => a.target.kind === "customer");
    expect(acting.map((a) => a.title)).toEqual(["Act for the profile's own account", "Act for Borealis Grid"]);
    expect(actions(null).some((a) => a.target.kind === "customer")).toBe(false);
  });

  it("every action with a shortcut shows its keys", () => {
    const byKey = new Map(actions(null).map((a) => [a.key, a.keys]));
    expect(byKey.get("area:rollouts")).toBe("Ctrl+3");
    expect(byKey.get("new-downlink")).toBe("Ctrl+Shift+D");
    expect(byKey.get("sheet")).toBe("?");
  });

  it("found items open their screen: a device its page, the others through a link", () => {
    expect(fromItem(item("device", "u1", "Pump 7"))?.target).toEqual({ kind: "device", id: "u1" });
    expect(fromItem(item("downlink", "d1", "LoRa downlink d1", 1, "lora"))?.target).toEqual({
      kind: "link",
      link: { kind: "downlink", id: "d1" },
      sub: "lora",
    });
    expect(fromItem(item("profile", "staging", "staging"))?.target).toEqual({ kind: "profile", name: "staging" });
    expect(fromItem(item("widget", "w", "W"))).toBeNull();
  });

  it("nothing typed lists the recent items, then the actions", () => {
    const recent = withRecent([], fromItem(item("device", "u1", "Pump 7")) as Entry);
    const list = compose("", actions(null), recent, []);
    expect(list[0]).toMatchObject({ key: "device:u1", group: "Recent" });
    expect(list[1].key).toBe("area:home");
  });

  it("a typed text lists exact finds, then matching recent items and actions, then the rest; none twice", () => {
    const recent = withRecent([], fromItem(item("module", "m1", "Cellular modem")) as Entry);
    const found = [
      item("module", "m1", "Cellular modem", 50),
      item("package", "p1", "Cellular modem 1.2.0", 40),
      item("downlink", "x1", "LoRa downlink x1", 4294967295, "lora"),
    ];
    const list = compose("cell", actions(null), recent, found);
    expect(list.map((e) => e.key)).toEqual(["downlink:x1", "module:m1", "package:p1"]);
    expect(list[1].group).toBe("Recent");
    expect(compose("new down", actions(null), [], []).map((e) => e.key)).toEqual(["new-downlink"]);
  });

  it("recent items: newest first, no repeats, capped, actions not kept; a stored list is checked", () => {
    let r: Entry[] = [];
    for (let i = 0; i < MAX_RECENT + 3; i++) r = withRecent(r, fromItem(item("device", `u${i}`, `D${i}`)) as Entry);
    r = withRecent(r, fromItem(item("device", "u5", "D5")) as Entry);
    expect(r.length).toBe(MAX_RECENT);
    expect(r[0].key).toBe("device:u5");
    expect(new Set(r.map((e) => e.key)).size).toBe(MAX_RECENT);
    expect(withRecent(r, actions(null)[0])).toBe(r);
    expect(validRecent(r)).toBe(true);
    expect(validRecent([{ key: "k", title: "t", target: { kind: "area", area: "home" } }])).toBe(false);
    expect(validRecent([{ key: "k", title: "t", target: { kind: "link", link: { kind: "evil", id: "x" } } }])).toBe(false);
    expect(validRecent("nope")).toBe(false);
  });
});
