import { useEffect, useRef, useState } from "preact/hooks";
import { errorMessage, ipc, type DeviceIdCheck, type DeviceEntry } from "../ipc";
import { networkText } from "../lib/deviceLabels";
import { useLayer } from "../lib/layers";
import { Field } from "./Field";
import "./DevicePicker.css";

const PAGE_SIZE = 8;

/**
 * A device, picked from the device list (searched by name, description, barcode, IMEI or
 * DevEUI, ignoring case; paged, more on scroll; arrow keys move through it) or pasted in any of
 * the id forms. What is typed is
 * checked in Rust as typed (`check_device_id`): the field shows the id's form and normalised
 * spelling, or the rule it breaks. `error` (from the form's own check) wins over that.
 *
 * `kind` names the use when it narrows the forms (`sms` takes only the device's UUID).
 */
export function DevicePicker({
  value,
  onChange,
  error,
  label,
  testid,
  kind,
  id,
}: {
  value: string;
  onChange: (value: string) => void;
  error?: string | null;
  label: string;
  testid: string;
  kind?: string | null;
  /** The input's id (for the label and `error-<id>`); `testid` when absent. */
  id?: string;
}) {
  const inputId = id ?? testid;
  const [check, setCheck] = useState<DeviceIdCheck | null>(null);
  const [touched, setTouched] = useState(false);
  const [open, setOpen] = useState(false);
  const [picked, setPicked] = useState<DeviceEntry | null>(null);
  // The open list is a layer: Escape closes it alone, keeping the dialog and what was typed.
  useLayer(open, () => setOpen(false));

  useEffect(() => {
    let live = true;
    if (value.trim() === "") {
      setCheck(null);
      return;
    }
    void ipc.checkDeviceId(value, kind ?? null).then((c) => live && setCheck(c));
    return () => {
      live = false;
    };
  }, [value, kind]);

  const own = touched ? (check?.error?.rule ?? null) : null;
  const shownError = error ?? own;
  const name = picked && picked.uuid === value.trim() ? picked : null;
  const hint = check?.normalized ? (
    <span data-testid={`${testid}-form`}>
      {name ? (
        <>
          <strong>{name.name}</strong> · {check.form}
        </>
      ) : (
        <>
          {check.form}
          {check.normalized !== value.trim() && (
            <>
              {" "}
              · normalised <code>{check.normalized}</code>
            </>
          )}
        </>
      )}
    </span>
  ) : kind === "sms" ? (
    "The device's UUID (SMS downlinks match it exactly)"
  ) : (
    "Pick from the list, or paste a UUID, imei:…, deveui:…, dvnuuid:… or a urn:dev:… id"
  );

  return (
    <div class="device-picker" data-testid={testid}>
      <Field id={inputId} label={label} error={shownError} hint={hint}>
        <div class="picker-row">
          <input
            id={inputId}
            class="mono"
            value={value}
            autoComplete="off"
            spellcheck={false}
            placeholder="Device id"
            aria-invalid={shownError ? true : undefined}
            data-testid={`${testid}-input`}
            onInput={(e) => {
              onChange(e.currentTarget.value);
              setTouched(true);
            }}
          />
          <button
            type="button"
            class="button"
            aria-expanded={open}
            data-testid={`${testid}-browse`}
            onClick={() => setOpen((o) => !o)}
          >
            {open ? "Close list" : "Browse devices…"}
          </button>
        </div>
      </Field>
      {open && (
        <DeviceList
          testid={testid}
          onPick={(d) => {
            setPicked(d);
            onChange(d.uuid);
            setTouched(true);
            setOpen(false);
          }}
        />
      )}
    </div>
  );
}

/** The device list: a search box, a page of devices at a time, more on scroll or "More devices". */
function DeviceList({ testid, onPick }: { testid: string; onPick: (d: DeviceEntry) => void }) {
  const [search, setSearch] = useState("");
  const [items, setItems] = useState<DeviceEntry[]>([]);
  const [page, setPage] = useState(0);
  const [last, setLast] = useState(true);
  const [total, setTotal] = useState<number | null>(null);
  const [caseSensitive, setCaseSensitive] = useState(false);
  const [loading, setLoading] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const generation = useRef(0);
  const list = useRef<HTMLUListElement>(null);
  const end = useRef<HTMLLIElement>(null);
  const box = useRef<HTMLInputElement>(null);

  const load = async (text: string, p: number) => {
    const gen = p === 0 ? ++generation.current : generation.current;
    setLoading(true);
    setFailure(null);
    try {
      const r = await ipc.listDevices({ search: text === "" ? null : text, page: p, pageSize: PAGE_SIZE });
      if (gen !== generation.current) return;
      setItems((old) => (p === 0 ? r.items : [...old, ...r.items.filter((d) => !old.some((o) => o.uuid === d.uuid))]));
      setPage(r.page);
      setLast(r.last);
      setTotal(r.total);
      setCaseSensitive(r.caseSensitive);
    } catch (e) {
      if (gen === generation.current) setFailure(errorMessage(e));
    } finally {
      if (gen === generation.current) setLoading(false);
    }
  };
  const more = () => {
    if (!last && !loading) void load(search, page + 1);
  };

  // Search as the user types, a moment after the last key.
  useEffect(() => {
    const t = setTimeout(() => load(search, 0), 250);
    return () => clearTimeout(t);
  }, [search]);
  useEffect(() => box.current?.focus(), []);
  // The next page comes when the end of the list scrolls into view.
  useEffect(() => {
    const el = end.current;
    if (!el || last) return;
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && more(), { root: list.current });
    io.observe(el);
    return () => io.disconnect();
  }, [items.length, last, loading, search]);

  const options = () => [...(list.current?.querySelectorAll<HTMLButtonElement>(".picker-option") ?? [])];
  /** Arrow keys move between the search box and the options; past the last one, more load. */
  const onKey = (e: KeyboardEvent) => {
    const all = options();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    const go = (i: number) => {
      e.preventDefault();
      if (i < 0) box.current?.focus();
      else all[Math.min(i, all.length - 1)]?.focus();
    };
    if (e.key === "ArrowDown") {
      if (at === all.length - 1) more();
      go(at + 1);
    } else if (e.key === "ArrowUp") go(at - 1);
    else if (e.key === "Home" && at >= 0) go(0);
    else if (e.key === "End" && at >= 0) go(all.length - 1);
  };

  return (
    <div class="picker-list" role="group" aria-label="Devices" onKeyDown={onKey}>
      <input
        ref={box}
        type="search"
        placeholder={`Search name, description, barcode, IMEI or DevEUI${caseSensitive ? " (case-sensitive)" : ""}`}
        aria-label="Search devices"
        value={search}
        data-testid={`${testid}-search`}
        onInput={(e) => setSearch(e.currentTarget.value)}
      />
      {failure && (
        <p class="field-error" role="alert">
          {failure}
        </p>
      )}
      <ul ref={list} data-testid={`${testid}-options`}>
        {items.map((d) => {
          const net = networkText(d);
          return (
            <li key={d.uuid}>
              <button
                type="button"
                class="picker-option"
                data-testid={`${testid}-option`}
                data-uuid={d.uuid}
                title={`${d.name}${net ? ` · ${net}` : ""}\nUUID ${d.uuid}`}
                onClick={() => onPick(d)}
              >
                <strong>{d.name}</strong>
                <span class="muted">{d.description}</span>
                <span class="picker-ids muted">
                  {net && <span>{net}</span>}
                  <code>{d.uuid}</code>
                </span>
              </button>
            </li>
          );
        })}
        {!last && <li ref={end} class="picker-end" aria-hidden="true" />}
      </ul>
      <div class="picker-foot">
        <span class="muted" data-testid={`${testid}-count`}>
          {loading ? "Loading…" : total === null ? "" : `${items.length} of ${total} device${total === 1 ? "" : "s"}`}
        </span>
        {!last && (
          <button type="button" class="button button-small" disabled={loading} data-testid={`${testid}-more`} onClick={more}>
            More devices
          </button>
        )}
      </div>
    </div>
  );
}
