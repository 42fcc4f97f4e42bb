import { getCurrentWebview } from "@tauri-apps/api/webview";
import { useEffect, useRef, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { ErrorBox, Loading, NoticeRow, type Notice } from "../../components/States";
import type { Intent } from "../../lib/palette";
import { errorMessage, ipc, type FirmwareModule, type FirmwarePackage, type Link, type SpecificationSummary } from "../../ipc";
import { oneOf, useRemembered } from "../../lib/remember";
import { useSession } from "../../session";
import { isFilters, sortOf } from "./columns";
import { EditPackageDialog } from "./EditPackage";
import { NO_FILTERS, type Filters } from "./filters";
import { ModuleDetailDialog } from "./ModuleDetail";
import { MODULE_SORTS, ModulesTable } from "./ModulesTable";
import { NewPackageDialog } from "./NewPackage";
import { PackageFilesDialog } from "./PackageFiles";
import { PACKAGE_SORTS, PackagesTable } from "./PackagesTable";
import { SpecsTable } from "./SpecsTable";

type Tab = "specifications" | "modules" | "packages";
const TABS: { id: Tab; label: string }[] = [
  { id: "specifications", label: "Device specifications" },
  { id: "modules", label: "Modules" },
  { id: "packages", label: "Packages" },
];

/**
 * The firmware workspace: device specifications, modules and packages of the active profile and
 * customer, narrowed by specification, module and owner; packages created, described and deleted.
 * The tab, the filters and each list's sort are remembered across starts.
 */
export function FirmwareView({ link = null, intent = null }: { link?: Link | null; intent?: Intent | null }) {
  const { info } = useSession();
  const [tab, setTab] = useRemembered<Tab>("firmware.tab", "modules", oneOf<Tab>("specifications", "modules", "packages"));
  const [filters, setFilters] = useRemembered<Filters>("firmware.filters", NO_FILTERS, isFilters);
  const [moduleSort, setModuleSort] = useRemembered<string>("firmware.modules.sort", "name", sortOf(MODULE_SORTS));
  const [packageSort, setPackageSort] = useRemembered<string>("firmware.packages.sort", "-createdAt", sortOf(PACKAGE_SORTS));
  const [clientText, setClientText] = useState(filters.client ?? "");
  const [specs, setSpecs] = useState<SpecificationSummary[] | null>(null);
  const [specsError, setSpecsError] = useState<unknown>(null);
  const [modules, setModules] = useState<FirmwareModule[]>([]);
  const [count, setCount] = useState("");
  const [creatingFor, setCreatingFor] = useState<FirmwareModule | null>(null);
  // The module whose detail is open, by id.
  const [detailOf, setDetailOf] = useState<string | null>(null);
  const [editing, setEditing] = useState<FirmwarePackage | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [reloadKey, setReloadKey] = useState(0);
  const [confirmElement, confirm] = useConfirm();
  const [files, setFiles] = useState<{ pkg: FirmwarePackage; dropped: string | null } | null>(null);
  const [dragOver, setDragOver] = useState<string | null>(null);
  const shownPackages = useRef<FirmwarePackage[]>([]);
  const filesOpen = useRef(files);
  filesOpen.current = files;

  // Files dropped on the window (Tauri's drag-and-drop gives paths, not contents): a drop on a
  // package row or on its files dialog stages the first file for that package.
  useEffect(() => {
    const packageAt = (x: number, y: number) => {
      const el = document.elementFromPoint(x / window.devicePixelRatio, y / window.devicePixelRatio);
      return el?.closest<HTMLElement>("[data-package-id]")?.dataset.packageId ?? null;
    };
    let unlisten: (() => void) | null = null;
    let gone = false;
    void getCurrentWebview()
      .onDragDropEvent((event) => {
        const p = event.payload;
        if (p.type === "enter" || p.type === "over") {
          setDragOver(packageAt(p.position.x, p.position.y));
        } else if (p.type === "drop") {
          setDragOver(null);
          const id = packageAt(p.position.x, p.position.y) ?? filesOpen.current?.pkg.id ?? null;
          const pkg = filesOpen.current?.pkg.id === id ? filesOpen.current?.pkg : shownPackages.current.find((x) => x.id === id);
          if (!pkg || p.paths.length === 0) {
            setNotice({ kind: "error", text: "Drop a firmware file on a package row (Packages tab) or on its files dialog." });
            return;
          }
          if (p.paths.length > 1) {
            setNotice({ kind: "error", text: `A package takes one firmware file: ${p.paths.length} were dropped; the first is used.` });
          }
          setFiles({ pkg, dropped: p.paths[0] });
        } else {
          setDragOver(null);
        }
      })
      .then((u) => (gone ? u() : (unlisten = u)));
    return () => {
      gone = true;
      unlisten?.();
    };
  }, []);

  // A link to a module opens its detail; to a package, its files (read by id: it may be on no
  // page shown).
  useEffect(() => {
    if (link?.kind === "module") {
      setDetailOf(link.id);
    } else if (link?.kind === "package") {
      ipc.getPackage(link.id).then(
        (pkg) => setFiles({ pkg, dropped: null }),
        (e) => setNotice({ kind: "error", text: `Package ${link.id} could not be opened: ${errorMessage(e)}` }),
      );
    }
  }, [link]);

  // "New package" from the palette names its module: the module is read, then the form opens.
  useEffect(() => {
    if (intent?.what !== "new-package") return;
    let live = true;
    ipc.getModule(intent.moduleId).then(
      (d) => live && setCreatingFor(d.module),
      (e) => live && setNotice({ kind: "error", text: `Module ${intent.moduleId} could not be read: ${errorMessage(e)}` }),
    );
    return () => {
      live = false;
    };
  }, [intent]);

  const loadSpecs = () => {
    setSpecsError(null);
    ipc.listSpecifications().then(setSpecs, setSpecsError);
  };
  useEffect(loadSpecs, [reloadKey]);

  // A remembered specification this environment does not have (another profile's) narrows to
  // nothing: it is dropped, with the module picked under it.
  useEffect(() => {
    if (specs && filters.spec && !specs.some((s) => s.id === filters.spec)) setFilters({ ...filters, spec: null, module: null });
  }, [specs]);

  // The module filter offers the modules of the chosen specification (all pages).
  useEffect(() => {
    let live = true;
    (async () => {
      const all: FirmwareModule[] = [];
      let next: string | null = null;
      do {
        const page = await ipc.listModules({ next, sort: "name", deviceSpecificationId: filters.spec, clientId: null, limit: 1000 });
        all.push(...page.items);
        next = page.next;
      } while (next && live);
      if (live) setModules(all);
    })().catch(() => live && setModules([]));
    return () => {
      live = false;
    };
  }, [filters.spec]);

  const specName = (id: string) => specs?.find((s) => s.id === id)?.name ?? null;
  const setFilter = (patch: Partial<Filters>) => setFilters((f: Filters) => ({ ...f, ...patch }));

  const remove = async (p: FirmwarePackage) => {
    if (!info) return;
    const ok = await confirm({
      title: `Delete package ${p.firmwareVersion}?`,
      body: (
        <>
          <p>
            Package <strong>{p.firmwareVersion}</strong>
            {p._embedded?.module ? ` of ${p._embedded.module.name}` : ""} is deleted with its firmware file
            {p.firmwareFileName ? ` (${p.firmwareFileName})` : ""} and release notes. This cannot be undone.
          </p>
          <p class="muted">The service refuses to delete a package that devices still use as their target.</p>
        </>
      ),
      confirmLabel: "Delete package",
      danger: true,
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    try {
      await ipc.deletePackage({ packageId: p.id, actingFor: info.acting?.id ?? null });
      setNotice({ kind: "ok", text: `Deleted package ${p.firmwareVersion}.` });
      setReloadKey((k) => k + 1);
    } catch (e) {
      setNotice({ kind: "error", text: `Package ${p.firmwareVersion} was not deleted: ${errorMessage(e)}` });
    }
  };

  return (
    <section class="view" aria-labelledby="firmware-title">
      {confirmElement}
      <div class="view-head">
        <h1 id="firmware-title">Firmware</h1>
        <span class="muted" data-testid="module-count">
          {tab === "specifications" ? (specs ? `${specs.length} specifications` : "") : count}
        </span>
      </div>

      <div class="tabs" role="tablist" aria-label="Firmware">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            class={t.id === tab ? "tab active" : "tab"}
            aria-selected={t.id === tab}
            data-testid={`tab-${t.id}`}
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>

      {tab !== "specifications" && (
        <div class="filters" data-testid="filters">
          <label>
            <span>Device specification</span>
            <select
              data-testid="filter-spec"
              onChange={(e) => setFilter({ spec: e.currentTarget.value || null, module: null })}
            >
              <option value="" selected={!filters.spec}>
                All
              </option>
              {specs?.map((s) => (
                <option key={s.id} value={s.id} selected={filters.spec === s.id}>
                  {s.name ?? s.id}
                </option>
              ))}
            </select>
          </label>
          {tab === "packages" && (
            <label>
              <span>Module</span>
              <select data-testid="filter-module" onChange={(e) => setFilter({ module: e.currentTarget.value || null })}>
                <option value="" selected={!filters.module}>
                  All
                </option>
                {modules.map((m) => (
                  <option key={m.id} value={m.id} selected={filters.module === m.id}>
                    {m.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label>
            <span>Owner (client id)</span>
            <input
              data-testid="filter-client"
              class="mono"
              placeholder="any"
              value={clientText}
              onInput={(e) => setClientText(e.currentTarget.value)}
              onBlur={() => setFilter({ client: clientText.trim() || null })}
              onKeyDown={(e) => e.key === "Enter" && setFilter({ client: clientText.trim() || null })}
            />
          </label>
          {(filters.spec || filters.module || filters.client) && (
            <button
              type="button"
              class="button button-quiet"
              onClick={() => {
                setFilters(NO_FILTERS);
                setClientText("");
              }}
            >
              Clear filters
            </button>
          )}
        </div>
      )}

      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="firmware-notice" />}
      {creatingFor && (
        <NewPackageDialog
          module={creatingFor}
          onClose={() => setCreatingFor(null)}
          onCreated={(pkg) => {
            setNotice({ kind: "ok", text: `Created package ${pkg.firmwareVersion} of ${creatingFor.name}.`, id: pkg.id });
            setCreatingFor(null);
            setReloadKey((k) => k + 1);
          }}
        />
      )}
      {detailOf && (
        <ModuleDetailDialog
          moduleId={detailOf}
          clientId={filters.client}
          specName={specName}
          onClose={() => setDetailOf(null)}
        />
      )}
      {files && (
        <PackageFilesDialog
          key={`${files.pkg.id}|${files.dropped ?? ""}`}
          pkg={files.pkg}
          droppedPath={files.dropped}
          onClose={() => setFiles(null)}
          onChanged={() => setReloadKey((k) => k + 1)}
        />
      )}
      {editing && (
        <EditPackageDialog
          pkg={editing}
          onClose={() => setEditing(null)}
          onSaved={(p) => {
            setNotice({ kind: "ok", text: `Saved the description of package ${p.firmwareVersion}.` });
            setEditing(null);
            setReloadKey((k) => k + 1);
          }}
        />
      )}

      {tab === "specifications" &&
        (specsError !== null ? (
          <ErrorBox error={specsError} onRetry={loadSpecs} />
        ) : specs === null ? (
          <Loading label="Gathering device specifications…" />
        ) : (
          <SpecsTable
            specs={specs}
            onPick={(id) => {
              setFilters({ ...NO_FILTERS, spec: id });
              setTab("modules");
            }}
          />
        ))}
      {tab === "modules" && (
        <ModulesTable
          filters={filters}
          sort={moduleSort}
          onSort={setModuleSort}
          specName={specName}
          onCount={setCount}
          onNewPackage={setCreatingFor}
          onOpen={(m) => setDetailOf(m.id)}
          onShowPackages={(m) => {
            setFilters((f: Filters) => ({ ...f, spec: m.deviceSpecificationId, module: m.id }));
            setTab("packages");
          }}
        />
      )}
      {tab === "packages" && (
        <PackagesTable
          filters={filters}
          sort={packageSort}
          onSort={setPackageSort}
          reloadKey={reloadKey}
          onCount={setCount}
          onEdit={setEditing}
          onFiles={(pkg) => setFiles({ pkg, dropped: null })}
          onDelete={remove}
          onItems={(items) => (shownPackages.current = items)}
          dragOver={dragOver}
        />
      )}
    </section>
  );
}
