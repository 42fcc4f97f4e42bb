// Opening another screen's item from anywhere: the device page from a device shown in any table
// or detail (components/DeviceLabel). The app provides it; outside the app (tests) it is absent
// and nothing offers to open.

import { createContext } from "preact";
import { useContext } from "preact/hooks";

export type Navigate = {
  /** Opens the device page of `id` (any id form). */
  openDevice: (id: string) => void;
};

export const NavigateContext = createContext<Navigate | null>(null);

export function useNavigate(): Navigate | null {
  return useContext(NavigateContext);
}
