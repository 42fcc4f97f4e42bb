import type { AppInfo } from "../ipc";

/** The app's name and, always visible, the active profile and what it talks to. */
export function Header({ info }: { info: AppInfo | null }) {
  return (
    <header class="header">
      <div class="brand">
        <svg class="brand-mark" viewBox="0 0 32 32" aria-hidden="true">
          <rect x="2" y="2" width="28" height="28" rx="6" />
          <path d="M10 14a8 8 0 0 1 12 0M7 11a12 12 0 0 1 18 0" />
          <circle cx="16" cy="18" r="2" />
          <path d="M16 18v7" />
        </svg>
        <span class="brand-name">Device Connectivity Console</span>
      </div>
      <div class="header-context">
        <span class="label">Profile</span>
        <span class="profile-badge" data-testid="profile">
          {info ? info.profile : "…"}
        </span>
        {info?.simulator && (
          <span class="sim-badge" title="The built-in profile talks to the simulator running inside the app">
            Simulator
          </span>
        )}
      </div>
    </header>
  );
}
