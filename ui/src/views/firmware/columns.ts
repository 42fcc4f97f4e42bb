// Which columns of the firmware lists tell the operator something, and the sorts and filters
// remembered across starts.

import type { Filters } from "./filters";

/** A name that already says its device specification: "Main MCU (Asset Tracker T1)". */
export function nameSaysSpec(name: string, spec: string | null | undefined): boolean {
  if (!spec) return false;
  return name.toLocaleLowerCase().includes(spec.toLocaleLowerCase());
}

/**
 * Whether a list needs its "Device specification" column: not when narrowed to one
 * specification, nor when every row's module name already names its specification. Rows whose
 * specification name is not known keep the column (the id is all that tells them apart).
 */
export function needsSpecColumn(rows: { moduleName: string | null | undefined; specName: string | null | undefined }[], narrowedToSpec: boolean): boolean {
  if (narrowedToSpec) return false;
  if (rows.length === 0) return true;
  return !rows.every((r) => !!r.moduleName && nameSaysSpec(r.moduleName, r.specName));
}

/** A check for a remembered sort: one of `fields`, ascending or descending (`-field`). */
export function sortOf(fields: readonly string[]) {
  return (v: unknown): v is string => typeof v === "string" && fields.includes(v.replace(/^-/, ""));
}

const idLike = (v: unknown) => v === null || (typeof v === "string" && v.length > 0 && v.length <= 100);

/** A check for remembered filters: the three members, each null or a short string. */
export function isFilters(v: unknown): v is Filters {
  if (typeof v !== "object" || v === null) return false;
  const f = v as Record<string, unknown>;
  return idLike(f.spec) && idLike(f.module) && idLike(f.client);
}
