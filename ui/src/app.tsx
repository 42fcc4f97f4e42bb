import { lazy, Suspense } from "preact/compat";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ActingBanner, Header } from "./components/Header";
import { AREAS, type Area } from "./areas";
import { Nav } from "./components/Nav";
import { StatusBar } from "./components/StatusBar";
import { events } from "./bindings";
import { ipc, errorMessage, type AppInfo, type Link } from "./ipc";
import { isTyping, shortcutOf } from "./lib/shortcuts";
import { subscribe } from "./lib/useEvent";
import { ShortcutsSheet } from "./components/ShortcutsSheet";
import { Palette } from "./components/Palette";
import { UpdateDialog } from "./components/UpdateDialog";
import { CloseDialog } from "./components/CloseDialog";
import type { Intent, Target } from "./lib/palette";
import { NavigateContext } from "./navigate";
import { loadFleet } from "./prepare";
import { DeviceView } from "./views/device/DeviceView";
import { oneOf, recall, remember } from "./lib/remember";
import { noteScope, type Switches } from "./lib/switches";
import { SessionContext } from "./session";
import { AuditView } from "./views/audit/AuditView";
import { BindingsView } from "./views/bindings/BindingsView";
import { DownlinksView } from "./views/downlinks/DownlinksView";
import { FirmwareView } from "./views/firmware/FirmwareView";
import { HomeView } from "./views/home/HomeView";
import { FleetSkeleton } from "./views/rollouts/FleetSkeleton";
import { SettingsView } from "./views/settings/SettingsView";

const FleetView = lazy(() => loadFleet().then((m) => m.FleetView));

const isArea = oneOf(...AREAS.map((a) => a.id));

/** The area a `dcs-console://` link's item is shown in (a device has its own page). */
const LINK_AREAS: Record<Exclude<Link["kind"], "device">, Area> = {
  rollout: "rollouts",
  module: "firmware",
  package: "firmware",
  downlink: "downlinks",
  binding: "bindings",
};


function areaFromHash(): Area | null {
  const h = location.hash.replace(/^#\/?/, "");
  return AREAS.find((a) => a.id === h)?.id ?? null;
}

export function App() {
  // The address names the area when it does (a link, a test); else the one left last time;
  // on a first start, Home.
  const [area, setArea] = useState<Area>(() => areaFromHash() ?? recall<Area>("area", "home", isArea));
  useEffect(() => remember("area", area), [area]);
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [infoError, setInfoError] = useState<string | null>(null);

  useEffect(() => {
    ipc.appInfo().then(setInfo, (e) => setInfoError(errorMessage(e)));
    const onHash = () => {
      const a = areaFromHash();
      if (a) setArea(a);
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  // The device page, in place of the area's screen (which is mounted again on Back: a dialog
  // open there, like a downlink's detail the page was opened from, closes with it).
  const [device, setDevice] = useState<string | null>(null);
  const go = (a: Area) => {
    location.hash = `#/${a}`;
    setArea(a);
    setDevice(null);
  };
  const navigate = useMemo(() => ({ openDevice: (id: string) => setDevice(id) }), []);

  const [intent, setIntent] = useState<Intent | null>(null);
  // Refresh: the screen is mounted again, and reads everything afresh.
  const [refreshed, setRefreshed] = useState(0);
  const [actionError, setActionError] = useState<string | null>(null);
  const [palette, setPalette] = useState<{ initial?: string; mode?: "all" | "module" } | null>(null);

  const openLink = (l: Link) => {
    if (l.kind === "device") {
      setDevice(l.id);
      return;
    }
    setLink({ ...l });
    go(LINK_AREAS[l.kind]);
  };

  const switchSession = (work: Promise<AppInfo>, what: string) =>
    work.then(
      (i) => {
        setActionError(null);
        setInfo(i);
      },
      (e) => setActionError(`${what}: ${errorMessage(e)}`),
    );

  /** Does what a palette entry or a shortcut asks. */
  const run = (t: Target) => {
    switch (t.kind) {
      case "area":
        return go(t.area);
      case "sheet":
        return setSheet(true);
      case "updates":
        return setUpdating(true);
      case "refresh":
        return setRefreshed((n) => n + 1);
      case "device":
        return setDevice(t.id);
      case "link":
        return openLink(t.link);
      case "profile":
        return void switchSession(ipc.activateProfile(t.name), `Profile ${t.name} could not be used`);
      case "customer":
        return void switchSession(ipc.actAs(t.id), `Could not act for ${t.label}`);
      case "choose-module":
        return setPalette({ mode: "module" });
      case "new-package":
        go("firmware");
        return setIntent({ what: "new-package", moduleId: t.moduleId });
      case "new-downlink":
        go("downlinks");
        return setIntent({ what: "new-downlink" });
      case "new-binding":
        go("bindings");
        return setIntent({ what: "new-binding" });
    }
  };

  // Keyboard shortcuts (lib/shortcuts: the areas, the palette, new items, refresh, `?` the sheet).
  const [sheet, setSheet] = useState(false);
  const runRef = useRef(run);
  runRef.current = run;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const s = shortcutOf({
        key: e.key,
        ctrlKey: e.ctrlKey,
        metaKey: e.metaKey,
        altKey: e.altKey,
        shiftKey: e.shiftKey,
        typing: isTyping(document.activeElement),
      });
      if (!s || e.defaultPrevented) return;
      // Never the web view's own reload, even behind a dialog.
      e.preventDefault();
      // Not behind an open dialog: the screens change under it.
      if (document.querySelector("dialog[open]")) return;
      if (s.kind === "area") go(s.area);
      else if (s.kind === "palette") setPalette({});
      else if (s.kind === "new-package") setPalette({ mode: "module" });
      else if (s.kind === "customer") setPalette({ initial: "Act for " });
      else runRef.current(s);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // A `dcs-console://` link the app was launched with, or a later launch handed over (Rust
  // keeps it until taken): its area, where the screen opens the item. Each link is a new object,
  // so the same link twice opens its item twice.
  const [link, setLink] = useState<Link | null>(null);
  const [linkError, setLinkError] = useState<string | null>(null);
  useEffect(() => {
    const take = () =>
      ipc.takeLink().then(
        (l) => {
          if (!l) return;
          setLinkError(null);
          openLink(l);
        },
        (e) => setLinkError(`The link could not be opened: ${errorMessage(e)}`),
      );
    void take();
    return subscribe(events.linkWaiting, () => void take());
  }, []);

  // The window was closed while rollouts run: what to do is asked (components/CloseDialog).
  const [closing, setClosing] = useState<number | null>(null);
  useEffect(() => subscribe(events.closeAsked, (e) => setClosing(e.running)), []);

  // Updates of the app: the dialog (from the palette or the banner), and the banner the start-up
  // check raises when it finds a newer version (Rust's `UpdateAvailable`).
  const [updating, setUpdating] = useState(false);
  const [available, setAvailable] = useState<string | null>(null);
  useEffect(() => subscribe(events.updateAvailable, (e) => setAvailable(e.version)), []);

  const session = useMemo(() => ({ info, update: setInfo }), [info]);
  // Lists belong to one profile and customer: a switch remounts the screen so it loads afresh
  // (lib/switches.ts: the first answer of `appInfo` is no switch).
  const switches = useRef<Switches>({ scope: null, count: 0 });
  switches.current = noteScope(switches.current, info ? `${info.profile}|${info.acting?.id ?? ""}` : null);

  return (
    <SessionContext.Provider value={session}>
      <NavigateContext.Provider value={navigate}>
        <div class={info?.acting ? "shell shell-acting" : "shell"}>
          <Header />
          <ActingBanner />
          <Nav current={area} onSelect={go} />
          <main class="content" id="main" tabIndex={-1} key={`${switches.current.count}|${refreshed}`}>
            {linkError && (
              <div class="notice notice-error" role="alert" data-testid="link-error">
                {linkError}
                <button type="button" class="button button-quiet button-small" onClick={() => setLinkError(null)}>
                  Dismiss
                </button>
              </div>
            )}
            {available && (
              <div class="notice" role="status" data-testid="update-available">
                Version {available} of the console is available.{" "}
                <button
                  type="button"
                  class="button button-small"
                  data-testid="update-available-open"
                  onClick={() => {
                    setAvailable(null);
                    setUpdating(true);
                  }}
                >
                  See what is new…
                </button>{" "}
                <button type="button" class="button button-quiet button-small" onClick={() => setAvailable(null)}>
                  Not now
                </button>
              </div>
            )}
            {info?.notice && (
              <div class="notice" role="status" data-testid="notice">
                {info.notice}
              </div>
            )}
            {actionError && (
              <div class="notice notice-error" role="alert" data-testid="action-error">
                {actionError}
                <button type="button" class="button button-quiet button-small" onClick={() => setActionError(null)}>
                  Dismiss
                </button>
              </div>
            )}
            {info && device && (
              <DeviceView
                id={device}
                onBack={() => setDevice(null)}
                onOpen={openLink}
                onTable={(id) => {
                  setLink({ kind: "device", id });
                  go("rollouts");
                }}
              />
            )}
            {!device && (
              <>
                {area === "home" && <HomeView go={go} />}
                {info && area === "firmware" && <FirmwareView link={link} intent={intent} />}
                {info && area === "bindings" && <BindingsView link={link} intent={intent} />}
                {info && area === "downlinks" && <DownlinksView link={link} intent={intent} />}
                {area === "audit" && <AuditView onOpen={openLink} />}
                {area === "settings" && <SettingsView error={infoError} />}
                {info && area === "rollouts" && (
                  <Suspense fallback={<FleetSkeleton />}>
                    <FleetView link={link} />
                  </Suspense>
                )}
              </>
            )}
          </main>
          <StatusBar info={info} error={infoError} />
          {sheet && <ShortcutsSheet onClose={() => setSheet(false)} />}
          {updating && <UpdateDialog onClose={() => setUpdating(false)} />}
          {closing !== null && <CloseDialog running={closing} onClose={() => setClosing(null)} />}
          {palette && <Palette initial={palette.initial} mode={palette.mode} onClose={() => setPalette(null)} onPick={run} />}
        </div>
      </NavigateContext.Provider>
    </SessionContext.Provider>
  );
}
