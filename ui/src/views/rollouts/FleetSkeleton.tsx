import "./fleet-skeleton.css";

/**
 * What the Rollouts area shows while its code loads the first time: its heading, toolbar and
 * tabs in grey, where the dashboard will be, so the area does not blank out or jump.
 */
export function FleetSkeleton() {
  return (
    <section class="view fleet" aria-labelledby="fleet-title" aria-busy="true" data-testid="fleet-skeleton">
      <div class="view-head">
        <h1 id="fleet-title">Rollouts</h1>
        <span class="muted">Opening the dashboard…</span>
      </div>
      <div class="card skel-bar" />
      <div class="skel-tabs">
        {[0, 1, 2, 3].map((i) => (
          <span key={i} class="skel" />
        ))}
      </div>
      <div class="skel-body">
        <div class="card skel-block" />
        <div class="card skel-block" />
      </div>
    </section>
  );
}
