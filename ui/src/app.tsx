import { lazy, Suspense } from "preact/compat";
import { useEffect, useMemo, useState } from "preact/hooks";
import { ActingBanner, Header } from "./components/Header";
import { Nav, type Area, AREAS } from "./components/Nav";
import { StatusBar } from "./components/StatusBar";
import { ipc, errorMessage, type AppInfo } from "./ipc";
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
          {info?.notice && (
            <div class="notice" role="status" data-testid="notice">
              {info.notice}
            </div>
          )}
          {info && area === "home" && <HomeView go={go} />}
          {info && area === "firmware" && <FirmwareView />}
          {info && area === "bindings" && <BindingsView />}
          {info && area === "downlinks" && <DownlinksView />}
          {area === "settings" && <SettingsView error={infoError} />}
          {info && area === "rollouts" && (
            <Suspense fallback={<FleetSkeleton />}>
              <FleetView />
            </Suspense>
          )}
        </main>
        <StatusBar info={info} error={infoError} />
      </div>
    </SessionContext.Provider>
  );
}
