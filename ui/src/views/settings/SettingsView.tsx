import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { ErrorBox, Loading } from "../../components/States";
import { ipc, type ProfileList, type ProfileSummary, type TokenCheck } from "../../ipc";
import { useSession } from "../../session";
import { HelpCard } from "./HelpCard";
import { NotificationsCard } from "./NotificationsCard";
import { ProfileEditor } from "./ProfileEditor";
import { TokenResult } from "./TokenResult";
import { UpdatesCard } from "./UpdatesCard";

function secretLabel(p: ProfileSummary): string {
  switch (p.secret.state) {
    case "stored":
      return "In the OS keychain";
    case "missing":
      return "Missing — edit to add";
    case "builtin":
      return "Built in (simulator)";
    case "unavailable":
      return "Keychain unavailable";
  }
}

export function SettingsView({ error }: { error: string | null }) {
  const { info, update } = useSession();
  const [list, setList] = useState<ProfileList | null>(null);
  const [listError, setListError] = useState<unknown>(null);
  const [editing, setEditing] = useState<ProfileSummary | "new" | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [tests, setTests] = useState<Record<string, { running: boolean; result?: TokenCheck; error?: unknown }>>({});
  const [confirmElement, confirm] = useConfirm();

  const load = () => {
    setListError(null);
    ipc.listProfiles().then(setList, setListError);
  };
  useEffect(load, [info?.profile]);

  const act = async (work: () => Promise<void>) => {
    setActionError(null);
    try {
      await work();
    } catch (e) {
      setActionError(e);
    }
  };

  const use = (name: string) => act(async () => update(await ipc.activateProfile(name)));

  const remove = (p: ProfileSummary) =>
    act(async () => {
      const ok = await confirm({
        title: `Remove profile ${p.profile.name}?`,
        body: (
          <p>
            The profile leaves the profiles file and its secret leaves the OS keychain. The service and its data are not
            touched.{p.active ? " The app switches to the built-in simulator profile." : ""}
          </p>
        ),
        confirmLabel: "Remove profile",
        danger: true,
      });
      if (!ok) return;
      update(await ipc.deleteProfile(p.profile.name));
      load();
    });

  const test = async (name: string) => {
    setTests((t) => ({ ...t, [name]: { running: true } }));
    try {
      const result = await ipc.testStoredProfile(name);
      setTests((t) => ({ ...t, [name]: { running: false, result } }));
    } catch (e) {
      setTests((t) => ({ ...t, [name]: { running: false, error: e } }));
    }
  };

  return (
    <section class="view" aria-labelledby="settings-title">
      {confirmElement}
      <div class="view-head">
        <h1 id="settings-title">Settings</h1>
      </div>

      <div class="card">
        <h2>Active profile</h2>
        {error && <p class="status-error">{error}</p>}
        {info && (
          <dl class="facts">
            <dt>Profile</dt>
            <dd data-testid="active-profile">{info.profile}</dd>
            <dt>Service</dt>
            <dd>{info.simulator ? "Simulator running inside the app, with the demo data set" : "Remote service"}</dd>
            <dt>Base URL</dt>
            <dd>
              <code>{info.baseUrl}</code>
            </dd>
            <dt>Acting for</dt>
            <dd>{info.acting ? `${info.acting.label} (${info.acting.id})` : "Yourself"}</dd>
            <dt>Version</dt>
            <dd>{info.version}</dd>
          </dl>
        )}
      </div>

      <div class="card">
        <div class="card-head">
          <h2>Profiles</h2>
          <span class="spacer" />
          {editing === null && (
            <button type="button" class="button button-primary" onClick={() => setEditing("new")} data-testid="add-profile">
              Add profile
            </button>
          )}
        </div>
        {list && (
          <p class="muted">
            Kept in <code>{list.configPath}</code>, shared with the <code>dcs</code> command line. Secrets are only in the
            OS keychain.
          </p>
        )}
        {list?.configError && <ErrorBox error={new Error(list.configError)} />}
        {listError !== null && <ErrorBox error={listError} onRetry={load} />}
        {actionError !== null && <ErrorBox error={actionError} />}
        {!list && listError === null && <Loading label="Loading profiles…" />}
        {list && (
          <div class="table-wrap">
            <table class="table table-compact" data-testid="profiles-table">
              <thead>
                <tr>
                  <th scope="col" style={{ width: "25%" }}>
                    Name
                  </th>
                  <th scope="col">Service</th>
                  <th scope="col" style={{ width: "13%" }}>
                    Client id
                  </th>
                  <th scope="col" style={{ width: "96px" }}>
                    Customers
                  </th>
                  <th scope="col" style={{ width: "130px" }}>
                    Secret
                  </th>
                  <th scope="col" style={{ width: "196px" }}>
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.profiles.map((p) => {
                  const t = tests[p.profile.name];
                  return [
                    <tr key={p.profile.name} data-testid="profile-row" data-name={p.profile.name}>
                      <td title={p.profile.name}>
                        <strong>{p.profile.name}</strong>{" "}
                        {p.active && <span class="tag tag-active">Active</span>}{" "}
                        {p.isDefault && <span class="tag">Default</span>}{" "}
                        {p.profile.deprecatedSubCustomerMode && <span class="tag tag-deprecated">x-client-id</span>}
                      </td>
                      <td title={p.builtin ? "The simulator running inside the app" : p.profile.baseUrl}>
                        {p.builtin ? "Simulator inside the app" : <code>{p.profile.baseUrl}</code>}
                      </td>
                      <td title={p.profile.clientId}>
                        <code>{p.profile.clientId}</code>
                      </td>
                      <td>{p.profile.customers?.length ?? 0}</td>
                      <td class={p.secret.state === "stored" || p.secret.state === "builtin" ? "" : "status-error"} title={p.secret.state === "unavailable" ? p.secret.message : undefined}>
                        {secretLabel(p)}
                      </td>
                      <td class="actions-cell">
                        <div class="row-actions">
                        {!p.active && (
                          <button type="button" class="button button-small" onClick={() => use(p.profile.name)} data-testid="use-profile">
                            Use
                          </button>
                        )}
                        <button type="button" class="button button-small" onClick={() => test(p.profile.name)} disabled={t?.running} data-testid="test-profile">
                          {t?.running ? "Testing…" : "Test"}
                        </button>
                        {!p.builtin && (
                          <>
                            <button type="button" class="button button-small" onClick={() => setEditing(p)} data-testid="edit-profile">
                              Edit
                            </button>
                            <button type="button" class="button button-small button-danger-quiet" onClick={() => remove(p)} data-testid="delete-profile">
                              Remove
                            </button>
                          </>
                        )}
                        </div>
                      </td>
                    </tr>,
                    t && !t.running && (
                      <tr key={`${p.profile.name}-test`} class="row-detail">
                        <td colSpan={6}>
                          <TokenResult result={t.result} error={t.error} />
                        </td>
                      </tr>
                    ),
                  ];
                })}
              </tbody>
            </table>
          </div>
        )}
      </div>

      {editing !== null && (
        <ProfileEditor
          key={editing === "new" ? "new" : editing.profile.name}
          editing={editing === "new" ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={async () => {
            setEditing(null);
            load();
            update(await ipc.appInfo());
          }}
        />
      )}

      <NotificationsCard />
      <UpdatesCard />
      <HelpCard />
    </section>
  );
}
