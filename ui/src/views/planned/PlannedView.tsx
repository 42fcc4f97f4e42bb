import type { Area } from "../../components/Nav";

const PLANNED: Record<string, { title: string; what: string[] }> = {
  rollouts: {
    title: "Rollouts",
    what: [
      "Scan every firmware state of the active customer and keep it in a local database",
      "Devices by version and update status, drift and failures, per module",
      "Run a rollout in waves with success and error thresholds, pause, resume and abort",
    ],
  },
};

/** An honest placeholder for an area that is not built yet: it says what will be here. */
export function PlannedView({ area }: { area: Area }) {
  const p = PLANNED[area];
  if (!p) return null;
  return (
    <section class="view" aria-labelledby="planned-title">
      <div class="view-head">
        <h1 id="planned-title">{p.title}</h1>
      </div>
      <div class="card planned">
        <p class="muted">This area is not available in this version yet. It will offer:</p>
        <ul>
          {p.what.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      </div>
    </section>
  );
}
