// Downlinks in progress kept current by Rust (src-tauri/src/downlink_watch.rs): the screen starts
// a watch of what it shows, Rust asks the service at the pace the screen used to and pushes
// only what changed (the `downlinkChanged` event, tagged with the watch), and the screen stops
// the watch when it no longer shows anything in progress. No timer here asks Rust.

import {
  commands,
  events,
  type DownlinkChanged_Serialize as Changed,
  type DownlinkDetail_Serialize as DownlinkDetail,
  type DownlinkKind,
  type DownlinkPage_Serialize as DownlinkPage,
  type DownlinkPageRequest_Deserialize as DownlinkPageRequest,
} from "../bindings";
import { IpcError } from "../ipc";
import { subscribe } from "./useEvent";

/** What a watch pushed: the answer now, or why asking failed (the watch goes on). */
export type Pushed<T> = { ok: true; value: T } | { ok: false; error: IpcError };


function watch<T>(start: () => Promise<number>, pick: (e: Changed) => T | null, onChange: (p: Pushed<T>) => void): () => void {
  let id: number | null = null;
  let gone = false;
  const stopEvents = subscribe(events.downlinkChanged, (e) => {
    if (e.watch !== id) return;
    const value = pick(e);
    if (value !== null) onChange({ ok: true, value });
    else if (e.error) onChange({ ok: false, error: new IpcError(e.error) });
  });
  start().then(
    (w) => {
      if (gone) void commands.unwatchDownlinks(w);
      else id = w;
    },
    () => undefined,
  );
  return () => {
    gone = true;
    stopEvents();
    if (id !== null) void commands.unwatchDownlinks(id).catch(() => undefined);
  };
}

/** Watches the first `pages` pages of the list `request` (its first page's) opens; the answer stops it. */
export function watchDownlinkList(request: DownlinkPageRequest, pages: number, onChange: (p: Pushed<DownlinkPage>) => void): () => void {
  return watch(() => commands.watchDownlinks(request, pages), (e) => e.list, onChange);
}

/** Watches one downlink until it is final; the answer stops it. */
export function watchDownlink(kind: DownlinkKind, id: string, onChange: (p: Pushed<DownlinkDetail>) => void): () => void {
  return watch(() => commands.watchDownlink(kind, id), (e) => e.detail, onChange);
}
