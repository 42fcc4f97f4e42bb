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
  downlinks: {
    title: "Downlinks",
    what: [
      "Compose actuator-style downlinks with a preview of the exact request",
      "Connection-specific downlinks (HTTP, LoRa, MQTT, SMS) behind a clear warning",
      "Status timelines, auto-refresh and cancellation",
    ],
  },
  bindings: {
    title: "Bindings",
    what: ["LoRa, HTTP and MQTT connector bindings: list, create, edit and delete", "Masked keys and passwords, with a password generator"],
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
