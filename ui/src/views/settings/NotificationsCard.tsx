import { useEffect, useState } from "preact/hooks";
import { errorMessage, ipc } from "../../ipc";
import type { NoticeSettings_Serialize as NoticeSettings } from "../../bindings";

const CHOICES: { key: keyof NoticeSettings; label: string; hint: string }[] = [
  { key: "waves", label: "A rollout's wave started", hint: "with how the wave before it ended" },
  { key: "rollouts", label: "A rollout paused or completed", hint: "a threshold paused it, or every wave finished" },
  { key: "downlinks", label: "A downlink sent from here reached a final status", hint: "delivered, failed or cancelled" },
  { key: "uploads", label: "An upload finished while the window was in the background", hint: "a firmware file or release notes" },
];

/**
 * Which desktop notifications the app raises (kept in the fleet database's settings). Each opens
 * its item when clicked.
 */
export function NotificationsCard() {
  const [settings, setSettings] = useState<NoticeSettings | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    ipc.notificationSettings().then(setSettings, (e) => setError(errorMessage(e)));
  }, []);

  const toggle = async (key: keyof NoticeSettings, on: boolean) => {
    if (!settings) return;
    const before = settings;
    const next = { ...settings, [key]: on };
    setSettings(next);
    try {
      setSettings(await ipc.setNotificationSettings(next));
      setError(null);
    } catch (e) {
      setSettings(before);
      setError(`Not changed: ${errorMessage(e)}`);
    }
  };

  return (
    <div class="card" data-testid="notifications">
      <h2>Notifications</h2>
      <p class="muted">Desktop notifications, from the system; clicking one opens what it is about.</p>
      {settings && (
        <div class="notification-choices">
          {CHOICES.map((c) => (
            <label key={c.key} class="check-row">
              <input
                type="checkbox"
                checked={settings[c.key]}
                data-testid={`notify-${c.key}`}
                onChange={(e) => void toggle(c.key, (e.target as HTMLInputElement).checked)}
              />
              <span>
                {c.label} <span class="muted">({c.hint})</span>
              </span>
            </label>
          ))}
        </div>
      )}
      {error && (
        <p class="result result-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
