import { useState } from "preact/hooks";
import { errorMessage, ipc } from "../ipc";
import { useSession } from "../session";

/**
 * The app's name and, always visible, the active profile, what it talks to, and for reseller
 * profiles the customer switcher.
 */
export function Header() {
  const { info, update } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const switchTo = async (customer: string) => {
    setBusy(true);
    setError(null);
    try {
      update(await ipc.actAs(customer === "" ? null : customer));
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

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
        {error && (
          <span class="header-error" role="alert" data-testid="switch-error" title={error}>
            {error}
          </span>
        )}
        <span class="label">Profile</span>
        <span class="profile-badge" data-testid="profile">
          {info ? info.profile : "…"}
        </span>
        {info?.simulator && (
          <span class="sim-badge" title="The built-in profile talks to the simulator running inside the app">
            Simulator
          </span>
        )}
        {info && info.customers.length > 0 && (
          <label class="switcher">
            <span class="label">Acting for</span>
            <select
              data-testid="customer-switcher"
              disabled={busy}
              onChange={(e) => switchTo((e.target as HTMLSelectElement).value)}
            >
              <option value="" selected={!info.acting}>
                Yourself ({info.profile})
              </option>
              {info.customers.map((c) => (
                <option key={c.id} value={c.id} selected={info.acting?.id === c.id}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
    </header>
  );
}

/** A band in the customer colour under the header on every screen while acting for a customer. */
export function ActingBanner() {
  const { info } = useSession();
  if (!info?.acting) return null;
  return (
    <div class="acting-banner acting" role="status" data-testid="acting-banner">
      <strong>Acting for customer {info.acting.label || info.acting.id}</strong>
      <code>{info.acting.id}</code>
      <span>
        Everything you change lands in this customer's environment
        {info.deprecatedSubCustomerMode ? " (deprecated x-client-id mode)" : ""}.
      </span>
    </div>
  );
}
