import { useEffect, useState } from "preact/hooks";
import { errorMessage, ipc, type DeviceIdCheck, type DeviceSummary } from "../ipc";
import { useLayer } from "../lib/layers";
import { Field } from "./Field";
import "./DevicePicker.css";

const PAGE_SIZE = 8;

/**
 * A device, picked from the device list (searched by name, description or barcode, as the
 * service matches them: case-sensitive) or pasted in any of the id forms. What is typed is
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
  const [picked, setPicked] = useState<DeviceSummary | null>(null);
  // The open list is a layer: Escape closes it alone, keeping the dialog and what was typed.
  useLayer(open, () => setOpen(false));

  useEffect(() => {
    let live = true;
    if (value.trim() === "") {
      setCheck(null);
      return;
    }
    ipc.checkDeviceId(value, kind ?? null).then((c) => live && setCheck(c));
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

/** The device list: a search box, a page of devices at a time, and "More devices". */
function DeviceList({ testid, onPick }: { testid: string; onPick: (d: DeviceSummary) => void }) {
  const [search, setSearch] = useState("");
  const [items, setItems] = useState<DeviceSummary[]>([]);
  const [page, setPage] = useState(0);
  const [last, setLast] = useState(true);
  const [total, setTotal] = useState<number | null>(null);
  const [loading, setLoading] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  const load = async (text: string, p: number, live: () => boolean) => {
    setLoading(true);
    setFailure(null);
    try {
      const r = await ipc.listDevices(text === "" ? null : text, p, PAGE_SIZE);
      if (!live()) return;
      setItems((old) => (p === 0 ? r.items : [...old, ...r.items]));
      setPage(r.page);
      setLast(r.last);
      setTotal(r.total);
    } catch (e) {
      if (live()) setFailure(errorMessage(e));
    } finally {
      if (live()) setLoading(false);
    }
  };

  // Search as the user types, a moment after the last key.
  useEffect(() => {
    let live = true;
    const t = setTimeout(() => load(search, 0, () => live), 250);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [search]);

  return (
    <div class="picker-list" role="group" aria-label="Devices">
      <input
        type="search"
        placeholder="Search name, description or barcode (case-sensitive)"
        value={search}
        data-testid={`${testid}-search`}
        onInput={(e) => setSearch(e.currentTarget.value)}
      />
      {failure && (
        <p class="field-error" role="alert">
          {failure}
        </p>
      )}
      <ul>
        {items.map((d) => (
          <li key={d.uuid}>
            <button type="button" class="picker-option" data-testid={`${testid}-option`} data-uuid={d.uuid} onClick={() => onPick(d)}>
              <strong>{d.name}</strong>
              <span class="muted">{d.description}</span>
              <code class="muted">{d.uuid}</code>
            </button>
          </li>
        ))}
      </ul>
      <div class="picker-foot">
        <span class="muted">
          {loading ? "Loading…" : total === null ? "" : `${items.length} of ${total} device${total === 1 ? "" : "s"}`}
        </span>
        {!last && (
          <button
            type="button"
            class="button button-small"
            disabled={loading}
            data-testid={`${testid}-more`}
            onClick={() => load(search, page + 1, () => true)}
          >
            More devices
          </button>
        )}
      </div>
    </div>
  );
}
