// Form helpers that are not layout: field errors by name, sending a form, and describing who a
// write acts for.

import { useState } from "preact/hooks";
import type { Customer, FieldError } from "../ipc";
import { IpcError } from "../ipc";

/** `[{field, rule}]` from a check command as `{field: "field: rule"}`, first rule per field. */
export function byField(errors: FieldError[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of errors) if (!(e.field in out)) out[e.field] = e.rule;
  return out;
}

/**
 * Splits a failed save into what belongs next to a field of the form (`fields`) and what
 * belongs to the form as a whole (`general`). The fields come from the error's `fields` (our own
 * checks, or the service's `invalidParams`), else its `field`; a service refusal without them
 * whose `detail` names a form field in backticks or quotes puts that detail beside the field.
 * The error stays for the form as a whole unless every field it names is one of `known`.
 */
export function placeError(e: unknown, known: string[]): { fields: Record<string, string>; general: unknown } {
  if (!(e instanceof IpcError)) return { fields: {}, general: e };
  const named = namedFields(e);
  const fields: Record<string, string> = {};
  let unplaced = named.length === 0;
  for (const { field, rule } of named) {
    if (known.includes(field)) {
      if (!(field in fields)) fields[field] = rule;
    } else {
      unplaced = true;
    }
  }
  return { fields, general: unplaced ? e : null };
}

/** The fields an error names, each with its rule. */
function namedFields(e: IpcError): { field: string; rule: string }[] {
  const listed = e.detail.fields ?? [];
  if (listed.length > 0) {
    return listed.map((f) => ({
      field: f.field,
      rule: e.code === "invalid_input" ? f.rule.replace(new RegExp(`^${escape(f.field)}: `), "") : f.rule,
    }));
  }
  if (e.field) {
    const rule = e.code === "invalid_input" ? e.message.replace(new RegExp(`^${escape(e.field)}: `), "") : e.message;
    return [{ field: e.field, rule }];
  }
  const detail = e.detail.problem?.detail;
  if (e.detail.status === 400 && detail) {
    const quoted = [...detail.matchAll(/[`'"‘“]([A-Za-z_][\w.[\]]*)[`'"’”]/g)].map((m) => m[1]);
    return [...new Set(quoted)].map((field) => ({ field, rule: detail }));
  }
  return [];
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** How confirmations and banners name where a write lands. */
export function actingLabel(acting: Customer | null): string {
  if (!acting) return "your own environment";
  return acting.label ? `customer ${acting.label} (${acting.id})` : `customer ${acting.id}`;
}

/** A token lifetime in seconds as words: `3600` → `1 h`, `90` → `1 min 30 s`. */
export function formatLifetime(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts = [h && `${h} h`, m && `${m} min`, s && `${s} s`].filter(Boolean);
  return parts.length ? parts.join(" ") : "0 s";
}

/**
 * Sending a form: `send(work)` runs it once at a time; a failure goes next to its field (one of
 * `known`, merged into the form's errors by `addErrors`) or into `failure` for the form as a
 * whole. Nothing the user typed is touched.
 */
export function useFormSend(known: string[], addErrors: (fields: Record<string, string>) => void) {
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const send = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    setSending(true);
    setFailure(null);
    try {
      return await work();
    } catch (err) {
      const placed = placeError(err, known);
      addErrors(placed.fields);
      setFailure(placed.general);
      return undefined;
    } finally {
      setSending(false);
    }
  };
  return { sending, failure, setFailure, send };
}
