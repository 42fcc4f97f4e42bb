import { lazy, Suspense } from "preact/compat";
import { useEffect, useMemo, useState } from "preact/hooks";
import { ActingBanner, Header } from "./components/Header";
import { Nav, type Area, AREAS } from "./components/Nav";
import { StatusBar } from "./components/StatusBar";
import { events } from "./bindings";
import { ipc, errorMessage, type AppInfo, type Link } from "./ipc";
import { isTyping, shortcutOf } from "./lib/shortcuts";
import { subscribe } from "./lib/useEvent";
import { ShortcutsSheet } from "./components/ShortcutsSheet";
import { oneOf, recall, remember } from "./lib/remember";
import { SessionContext } from "./session";
import { BindingsView } from "./views/bindings/BindingsView";
import { DownlinksView } from "./views/downlinks/DownlinksView";
import { FirmwareView } from "./views/firmware/FirmwareView";
import { HomeView } from "./views/home/HomeView";
import { FleetSkeleton } from "./views/rollouts/FleetSkeleton";
import { SettingsView } from "./views/settings/SettingsView";

// The dashboard carries the chart library and the virtualized table: loaded apart, so the first
// screen does not wait for them, and fetched once the first screen has painted, so opening
// Rollouts does not wait either (its skeleton stands in if it is opened sooner).
const loadFleet = () => import("./views/rollouts/FleetView");
const FleetView = lazy(() => loadFleet().then((m) => m.FleetView));

const isArea = oneOf(...AREAS.map((a) => a.id));

/** The area a `dcs-console://` link's item is shown in. */
const LINK_AREAS: Record<Link["kind"], Area> = {
  device: "rollouts",
  rollout: "rollouts",
  module: "firmware",
  package: "firmware",
  downlink: "downlinks",
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
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => void loadFleet().catch(() => undefined), 400);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, []);
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

  const go = (a: Area) => {
    location.hash = `#/${a}`;
    setArea(a);
  };

  // Keyboard shortcuts (lib/shortcuts: Ctrl+1..6 the areas, `?` the sheet listing them).
  const [sheet, setSheet] = useState(false);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const s = shortcutOf({ key: e.key, ctrlKey: e.ctrlKey, metaKey: e.metaKey, altKey: e.altKey, typing: isTyping(document.activeElement) });
      if (!s || e.defaultPrevented) return;
      // Not behind an open dialog: the areas change under it.
      if (document.querySelector("dialog[open]")) return;
      e.preventDefault();
      if (s.kind === "area") go(s.area);
      else setSheet(true);
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
          setLink({ ...l });
          go(LINK_AREAS[l.kind]);
        },
        (e) => setLinkError(`The link could not be opened: ${errorMessage(e)}`),
      );
    void take();
    return subscribe(events.linkWaiting, () => void take());
  }, []);

  const session = useMemo(() => ({ info, update: setInfo }), [info]);
  // Lists belong to one profile and customer: a switch remounts the screen so it loads afresh.
  const scope = info ? `${info.profile}|${info.acting?.id ?? ""}` : "";

  return (
    <SessionContext.Provider value={session}>
      <div class={info?.acting ? "shell shell-acting" : "shell"}>
        <Header />
        <ActingBanner />
        <Nav current={area} onSelect={go} />
        <main class="content" id="main" tabIndex={-1} key={scope}>
          {linkError && (
            <div class="notice notice-error" role="alert" data-testid="link-error">
              {linkError}
              <button type="button" class="button button-quiet button-small" onClick={() => setLinkError(null)}>
                Dismiss
              </button>
            </div>
          )}
          {info?.notice && (
            <div class="notice" role="status" data-testid="notice">
              {info.notice}
            </div>
          )}
          {info && area === "home" && <HomeView go={go} />}
          {info && area === "firmware" && <FirmwareView link={link} />}
          {info && area === "bindings" && <BindingsView />}
          {info && area === "downlinks" && <DownlinksView link={link} />}
          {area === "settings" && <SettingsView error={infoError} />}
          {info && area === "rollouts" && (
            <Suspense fallback={<FleetSkeleton />}>
              <FleetView link={link} />
            </Suspense>
          )}
        </main>
        <StatusBar info={info} error={infoError} />
        {sheet && <ShortcutsSheet onClose={() => setSheet(false)} />}
      </div>
    </SessionContext.Provider>
  );
}
