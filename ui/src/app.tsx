import { lazy, Suspense } from "preact/compat";
import { useEffect, useMemo, useState } from "preact/hooks";
import { Loading } from "./components/States";
import { ActingBanner, Header } from "./components/Header";
import { Nav, type Area, AREAS } from "./components/Nav";
import { StatusBar } from "./components/StatusBar";
import { ipc, errorMessage, type AppInfo } from "./ipc";
import { SessionContext } from "./session";
import { BindingsView } from "./views/bindings/BindingsView";
import { DownlinksView } from "./views/downlinks/DownlinksView";
import { FirmwareView } from "./views/firmware/FirmwareView";
import { SettingsView } from "./views/settings/SettingsView";

// The dashboard carries the chart library and the virtualized table: loaded when first opened,
// so the first screen does not wait for them.
const FleetView = lazy(() => import("./views/rollouts/FleetView").then((m) => m.FleetView));

function areaFromHash(): Area {
  const h = location.hash.replace(/^#\/?/, "");
  return (AREAS.find((a) => a.id === h)?.id ?? "firmware") as Area;
}

export function App() {
  const [area, setArea] = useState<Area>(areaFromHash());
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [infoError, setInfoError] = useState<string | null>(null);

  useEffect(() => {
    ipc.appInfo().then(setInfo, (e) => setInfoError(errorMessage(e)));
    const onHash = () => setArea(areaFromHash());
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
          {info && area === "firmware" && <FirmwareView />}
          {info && area === "bindings" && <BindingsView />}
          {info && area === "downlinks" && <DownlinksView />}
          {area === "settings" && <SettingsView error={infoError} />}
          {info && area === "rollouts" && (
            <Suspense fallback={<Loading label="Opening the dashboard…" />}>
              <FleetView />
            </Suspense>
          )}
        </main>
        <StatusBar info={info} error={infoError} />
      </div>
    </SessionContext.Provider>
  );
}
