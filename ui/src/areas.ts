// The app's areas, in the order the navigation shows them (components/Nav), with their icons.

export const AREAS = [
  { id: "home", label: "Home", icon: "M3 11l9-7 9 7M5 10v10h5v-6h4v6h5V10" },
  { id: "firmware", label: "Firmware", icon: "M4 5h16v4H4zM4 11h16v4H4zM4 17h10v3H4z" },
  { id: "rollouts", label: "Rollouts", icon: "M4 19V9M10 19V5M16 19v-7M22 19H2" },
  { id: "downlinks", label: "Downlinks", icon: "M12 3v14M6 11l6 6 6-6M4 21h16" },
  { id: "bindings", label: "Bindings", icon: "M9 15l6-6M7 11l-2 2a3 3 0 0 0 4 4l2-2M17 13l2-2a3 3 0 0 0-4-4l-2 2" },
  { id: "audit", label: "Audit", icon: "M9 4h6l1 2h3v15H5V6h3zM9 11l2 2 4-4M9 17h6" },
  { id: "settings", label: "Settings", icon: "M12 8a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM12 2v3M12 19v3M2 12h3M19 12h3" },
] as const;

export type Area = (typeof AREAS)[number]["id"];
