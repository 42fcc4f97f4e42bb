// Opt-in record of every command answer the web view receives, for the end-to-end test that
// proves no secret or token ever reaches it. Off unless `localStorage["dcs.recordIpc"]` is "1";
// the record stays in this page's memory (`window.__dcsIpcLog`) and is never sent anywhere.
// It wraps each generated command function, through which every call of the UI goes.

type Entry = { cmd: string; ok: boolean; value: unknown };
type Commands = Record<string, (...args: never[]) => Promise<unknown>>;

export function installIpcRecorder(commands: Commands): void {
  const w = window as unknown as { __dcsIpcLog?: Entry[] };
  let enabled = false;
  try {
    enabled = localStorage.getItem("dcs.recordIpc") === "1";
  } catch {
    enabled = false;
  }
  if (!enabled || w.__dcsIpcLog) return;
  const log: Entry[] = [];
  w.__dcsIpcLog = log;
  for (const [cmd, call] of Object.entries(commands)) {
    commands[cmd] = (async (...args: never[]) => {
      try {
        const value = await call(...args);
        log.push({ cmd, ok: true, value });
        return value;
      } catch (e) {
        log.push({ cmd, ok: false, value: String(e) });
        throw e;
      }
    }) as Commands[string];
  }
}
