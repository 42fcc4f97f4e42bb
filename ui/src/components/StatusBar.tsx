import { hostOf } from "../lib/format";
import { countsBadge, useRolloutCounts } from "../lib/rolloutCounts";
import type { AppInfo } from "../ipc";

export function StatusBar({ info, error }: { info: AppInfo | null; error: string | null }) {
  const rollouts = countsBadge(useRolloutCounts());
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
      {rollouts && (
        <a href="#/rollouts" class={`status-rollouts status-rollouts-${rollouts.tone}`} title={rollouts.title} data-testid="status-rollouts" data-tone={rollouts.tone}>
          <span class="status-rollouts-dot" aria-hidden="true" />
          Rollouts: {rollouts.text}
        </a>
      )}
      {info && <span class="muted">v{info.version}</span>}
    </footer>
  );
}
