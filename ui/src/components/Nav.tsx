import { countsBadge, useRolloutCounts } from "../lib/rolloutCounts";
import { SHORTCUTS } from "../lib/shortcuts";
import { AREAS, type Area } from "../areas";
import { intentTo } from "../prepare";

/** The keys that go to an area (lib/shortcuts), for its title. */
const shortcutOf = (area: Area) => SHORTCUTS.find((s) => s.does.kind === "area" && s.does.area === area)?.keys;

/** The areas; an entry pointed at or focused fetches what its screen loads apart (prepare.ts). */
export function Nav({ current, onSelect }: { current: Area; onSelect: (a: Area) => void }) {
  // Rollouts that run or wait (paused) show on their area from anywhere in the app.
  const rollouts = countsBadge(useRolloutCounts());
  return (
    <nav class="nav" aria-label="Areas">
      <ul>
        {AREAS.map((a) => (
          <li key={a.id}>
            <a
              href={`#/${a.id}`}
              class={a.id === current ? "nav-item active" : "nav-item"}
              aria-current={a.id === current ? "page" : undefined}
              data-testid={`nav-${a.id}`}
              title={shortcutOf(a.id) ? `${a.label} (${shortcutOf(a.id)})` : a.label}
              aria-keyshortcuts={shortcutOf(a.id)?.replace("Ctrl", "Control")}
              onClick={(e) => {
                e.preventDefault();
                onSelect(a.id);
              }}
              {...intentTo(a.id)}
            >
              <svg viewBox="0 0 24 24" aria-hidden="true">
                <path d={a.icon} />
              </svg>
              <span class="nav-label">{a.label}</span>
              {a.id === "rollouts" && rollouts && (
                <span class={`nav-badge nav-badge-${rollouts.tone}`} title={rollouts.title} aria-label={rollouts.title}
                  data-testid="nav-rollouts-badge" data-tone={rollouts.tone}>
                  {rollouts.tone === "warn" && (
                    <svg viewBox="0 0 10 10" aria-hidden="true">
                      <path d="M3 2v6M7 2v6" />
                    </svg>
                  )}
                  {rollouts.count}
                </span>
              )}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
