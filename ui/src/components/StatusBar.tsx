import { hostOf } from "../lib/format";
import type { AppInfo } from "../ipc";

export function StatusBar({ info, error }: { info: AppInfo | null; error: string | null }) {
  return (
    <footer class="statusbar" role="status">
      {error && <span class="status-error">Not connected: {error}</span>}
      {info && (
        <span>
          {info.simulator ? "Simulator" : "Service"} at{" "}
          <code data-testid="service-url" data-url={info.baseUrl}>
            {hostOf(info.baseUrl)}
          </code>
        </span>
      )}
      <span class="spacer" />
      {info && <span class="muted">v{info.version}</span>}
    </footer>
  );
}
