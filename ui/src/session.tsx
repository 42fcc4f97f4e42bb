// The active profile and customer, shared by every screen. Views read it to name where a write
// lands; the header and settings replace it after a switch.

import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { AppInfo } from "./ipc";

export type SessionValue = {
  info: AppInfo | null;
  /** Replace the session after a command answered with a new AppInfo. */
  update: (info: AppInfo) => void;
};

export const SessionContext = createContext<SessionValue>({ info: null, update: () => {} });

export function useSession(): SessionValue {
  return useContext(SessionContext);
}
