/** What the firmware workspace's lists are narrowed to. `client` is as typed (Rust checks it). */
export type Filters = { spec: string | null; module: string | null; client: string | null };

export const NO_FILTERS: Filters = { spec: null, module: null, client: null };
