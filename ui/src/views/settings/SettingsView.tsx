import type { AppInfo } from "../../ipc";

export function SettingsView({ info, error }: { info: AppInfo | null; error: string | null }) {
  return (
    <section class="view" aria-labelledby="settings-title">
      <div class="view-head">
        <h1 id="settings-title">Settings</h1>
      </div>
      <div class="card">
        <h2>Active profile</h2>
        {error && <p class="status-error">{error}</p>}
        {info && (
          <dl class="facts">
            <dt>Profile</dt>
            <dd>{info.profile}</dd>
            <dt>Service</dt>
            <dd>{info.simulator ? "Simulator running inside the app, with the demo data set" : "Remote service"}</dd>
            <dt>Base URL</dt>
            <dd>
              <code>{info.baseUrl}</code>
            </dd>
            <dt>Version</dt>
            <dd>{info.version}</dd>
          </dl>
        )}
        <p class="muted">
          Profiles for other environments, with their secrets kept in the OS keychain, can be added with a later
          version.
        </p>
      </div>
    </section>
  );
}
