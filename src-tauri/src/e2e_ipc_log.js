// Injected only by debug builds started with DCS_E2E_RECORD_IPC=1 (see e2e_ipc_log.rs): a record
// of every IPC answer the web view receives, for the end-to-end test that proves no secret or
// token ever reaches it. Off unless the page also opts in (`localStorage["dcs.recordIpc"]` is
// "1", read at page load); the record stays in this page's memory (`window.__dcsIpcLog`) and is
// never sent anywhere. Each entry is `{ cmd, ok, value, asked, answered }`: the command as the
// UI's `ipc` names it (`listProfiles`; a plugin's as Tauri does, `plugin:event|listen`), whether
// Rust answered ok, what it answered (the data, or the error), and when it was asked and
// answered (`performance.now()`, ms since the page started), for tests of what waits for what.
//
// Tauri's `invoke` cannot be replaced (it is a read-only property), but it sends each call as a
// `fetch` of `ipc://localhost/<command>` (the IPC custom protocol) and reads the answer from the
// response: this wraps `fetch` and reads a copy of each such response.
(function () {
  let enabled = false;
  try {
    enabled = window.localStorage.getItem("dcs.recordIpc") === "1";
  } catch (_) {
    enabled = false;
  }
  if (!enabled || window.__dcsIpcLog) return;
  const log = [];
  window.__dcsIpcLog = log;

  const PREFIXES = ["ipc://localhost/", "http://ipc.localhost/"];
  const camel = (cmd) => (cmd.includes(":") ? cmd : cmd.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()));
  const commandOf = (input) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input && input.url;
    const prefix = typeof url === "string" && PREFIXES.find((p) => url.startsWith(p));
    return prefix ? camel(decodeURIComponent(url.slice(prefix.length).split("?")[0])) : null;
  };
  const body = (response) => {
    switch ((response.headers.get("content-type") || "").split(",")[0]) {
      case "application/json":
        return response.json();
      case "text/plain":
        return response.text();
      default:
        return response.arrayBuffer().then((b) => ({ bytes: b.byteLength }));
    }
  };

  const fetch = window.fetch;
  window.fetch = function (input, init) {
    const cmd = commandOf(input);
    const answer = fetch.call(this, input, init);
    if (cmd === null) return answer;
    const asked = performance.now();
    return answer.then((response) => {
      const answered = performance.now();
      const ok = response.headers.get("Tauri-Response") === "ok";
      body(response.clone()).then(
        (value) => log.push({ cmd, ok, value, asked, answered }),
        (e) => log.push({ cmd, ok: false, value: String(e), asked, answered }),
      );
      return response;
    });
  };
})();
