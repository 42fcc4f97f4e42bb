#!/usr/bin/env python3
"""What a user would otherwise write for bench/fleet.sh (Python 3 standard library only).

  scan URL DB        page through GET /firmware/states?limit=1000 following `next`, store every
                     row into SQLite (one executemany per page, one commit at the end), then
                     aggregate the rows as the dashboard does (every module's devices, drift,
                     failures, updates, most run version; the biggest module's devices by
                     version, status, target, owner and failures) twice: with
                     collections.Counter over the rows in memory, and with GROUP BY in SQLite.
                     Prints one JSON object of times and the aggregates.
  set-targets URL FRACTION SEED [DB]
                     sets the target of about FRACTION of the states (those of DB, as `scan`
                     wrote it, else every state listed) to another packaged version with a file
                     (PUT /firmware/states/{deviceId}/{moduleId}, the simulator's documented
                     operation); prints how many, and the service time of the first change
                     (`since`, from the answers).

  refresh URL SINCE DB
                     the incremental form of `scan` into its DB: page through GET
                     /firmware/states?limit=1000&modifiedSince=SINCE following `next`, each page
                     into the same table (executemany INSERT OR REPLACE), one commit; prints the
                     states read and the seconds spent reading the pages, writing them (with the
                     commit) and closing the database.

The token comes from the environment (BENCH_TOKEN), fetched as the other benchmarks do.
"""

import json
import os
import random
import sqlite3
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter, defaultdict

TOKEN = os.environ["BENCH_TOKEN"]
FINAL = ("SUCCEEDED", "FAILED", "CANCELLED")


def get(url):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def put(url, body):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="PUT",
        headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def pages(url):
    while url:
        page = get(url)
        yield page["items"]
        url = page.get("next")


COLUMNS = (
    "moduleId", "deviceId", "deviceSpecificationId", "clientId", "currentFirmwareVersion",
    "targetFirmwareVersion", "firmwareUpdateStatus", "firmwareUpdateStatusDetails",
    "firmwareUpdateStatusModifiedAt",
)


def store(db, items):
    """Writes a page of states into the table `scan` made (a state already there is replaced);
    answers the rows written."""
    page = [tuple(s.get(c) for c in COLUMNS) for s in items]
    db.executemany("INSERT OR REPLACE INTO states VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", page)
    return page


def scan(base, path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE states (module_id TEXT, device_id TEXT, spec_id TEXT, client_id TEXT, current TEXT,"
        " target TEXT, status TEXT, details TEXT, status_at TEXT, PRIMARY KEY (module_id, device_id))"
    )
    rows = []
    n_pages = 0
    t0 = time.perf_counter()
    for items in pages(base.rstrip("/") + "/firmware/states?limit=1000"):
        n_pages += 1
        rows.extend(store(db, items))
    db.commit()
    scan_s = time.perf_counter() - t0

    # Aggregation 1: Counter over the rows in memory.
    t0 = time.perf_counter()
    mem = aggregate_in_memory(rows)
    counter_ms = (time.perf_counter() - t0) * 1000

    # Aggregation 2: GROUP BY in SQLite, over the file just written (no index beyond the key).
    t0 = time.perf_counter()
    sql = aggregate_in_sqlite(db)
    groupby_ms = (time.perf_counter() - t0) * 1000
    db.close()
    if mem != sql:
        sys.exit("the two aggregations disagree")
    print(json.dumps({
        "states": len(rows), "pages": n_pages, "scanS": scan_s,
        "counterMs": counter_ms, "groupbyMs": groupby_ms, "aggregates": mem,
    }))


def aggregate_in_memory(rows):
    devices, drift, failed, updating = Counter(), Counter(), Counter(), Counter()
    versions = defaultdict(Counter)
    for module, _dev, _spec, _client, current, target, status, _details, _at in rows:
        devices[module] += 1
        if target is not None and current != target:
            drift[module] += 1
        if status == "FAILED":
            failed[module] += 1
        if status is not None and status not in FINAL:
            updating[module] += 1
        if current is not None:
            versions[module][current] += 1
    biggest = max(devices, key=lambda m: (devices[m], m))
    by_version, by_status, by_target, by_customer, failures = Counter(), Counter(), Counter(), Counter(), Counter()
    for module, _dev, _spec, client, current, target, status, details, _at in rows:
        if module != biggest:
            continue
        by_version[current or "none"] += 1
        by_status[status or "none"] += 1
        by_target[target or "none"] += 1
        by_customer[client or "none"] += 1
        if status == "FAILED":
            failures[(details or "(no details given)", target)] += 1
    return summary(devices, drift, failed, updating, versions, biggest, by_version, by_status, by_target, by_customer, failures)


def aggregate_in_sqlite(db):
    devices, drift, failed, updating = Counter(), Counter(), Counter(), Counter()
    versions = defaultdict(Counter)
    for module, n, d, f, u in db.execute(
        "SELECT module_id, count(*), sum(target IS NOT NULL AND current IS NOT target), sum(status = 'FAILED'),"
        " sum(status IS NOT NULL AND status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')) FROM states GROUP BY module_id"
    ):
        devices[module], drift[module], failed[module], updating[module] = n, d, f, u
    for module, current, n in db.execute(
        "SELECT module_id, current, count(*) FROM states WHERE current IS NOT NULL GROUP BY module_id, current"
    ):
        versions[module][current] = n
    biggest = max(devices, key=lambda m: (devices[m], m))
    by = {}
    for column in ("current", "status", "target", "client_id"):
        by[column] = Counter(dict(db.execute(
            f"SELECT COALESCE({column}, 'none'), count(*) FROM states WHERE module_id = ? GROUP BY 1", (biggest,)
        )))
    failures = Counter({
        (d, t): n for d, t, n in db.execute(
            "SELECT COALESCE(details, '(no details given)'), target, count(*) FROM states"
            " WHERE module_id = ? AND status = 'FAILED' GROUP BY 1, 2", (biggest,)
        )
    })
    return summary(devices, drift, failed, updating, versions, biggest,
                   by["current"], by["status"], by["target"], by["client_id"], failures)


def summary(devices, drift, failed, updating, versions, biggest, by_version, by_status, by_target, by_customer, failures):
    modules = {}
    for m in devices:
        top = sorted(versions[m].items(), key=lambda kv: (-kv[1], kv[0]))
        modules[m] = {
            "devices": devices[m], "drift": drift[m], "failed": failed[m], "updating": updating[m],
            "topVersion": top[0][0] if top else None, "topVersionDevices": top[0][1] if top else 0,
        }
    plain = lambda c: {k: v for k, v in sorted(c.items()) if v}
    return {
        "modules": modules, "biggest": biggest,
        "byVersion": plain(by_version), "byStatus": plain(by_status),
        "byTarget": plain(by_target), "byCustomer": plain(by_customer),
        "failureGroups": len([v for v in failures.values() if v]),
    }


def set_targets(base, fraction, seed, path=None):
    base = base.rstrip("/")
    with_file = defaultdict(list)
    for items in pages(base + "/firmware/packages?limit=1000"):
        for p in items:
            if p.get("firmwareFileName"):
                with_file[p["moduleId"]].append(p["firmwareVersion"])
    if path:
        db = sqlite3.connect(path)
        states = [
            {"moduleId": m, "deviceId": d, "targetFirmwareVersion": t}
            for m, d, t in db.execute("SELECT module_id, device_id, target FROM states ORDER BY module_id, device_id")
        ]
        db.close()
    else:
        states = [s for items in pages(base + "/firmware/states?limit=1000") for s in items]
    rng = random.Random(seed)
    chosen = rng.sample(states, max(1, int(len(states) * fraction)))
    done, since = 0, None
    for s in chosen:
        versions = [v for v in with_file[s["moduleId"]] if v != s.get("targetFirmwareVersion")]
        if not versions:
            continue
        state = put(f"{base}/firmware/states/{s['deviceId']}/{s['moduleId']}", {"targetFirmwareVersion": rng.choice(versions)})
        at = state.get("targetFirmwareVersionModifiedAt")
        if since is None and at:
            since = at
        done += 1
    print(json.dumps({"set": done, "of": len(states), "since": since}))


def refresh(base, since, path):
    db = sqlite3.connect(path)
    url = base.rstrip("/") + "/firmware/states?limit=1000&modifiedSince=" + urllib.parse.quote(since)
    n, read_s, write_s = 0, 0.0, 0.0
    t0 = time.perf_counter()
    for items in pages(url):
        t1 = time.perf_counter()
        read_s += t1 - t0
        n += len(store(db, items))
        t0 = time.perf_counter()
        write_s += t0 - t1
    t1 = time.perf_counter()
    db.commit()
    t2 = time.perf_counter()
    db.close()
    print(json.dumps({"states": n, "readS": read_s, "writeS": write_s + t2 - t1, "closeS": time.perf_counter() - t2}))


if __name__ == "__main__":
    if sys.argv[1] == "scan":
        scan(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "set-targets":
        set_targets(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    elif sys.argv[1] == "refresh":
        refresh(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
