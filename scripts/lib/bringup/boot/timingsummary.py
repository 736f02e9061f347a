"""The statistics of boot timing's runs (boot/timing.py): the summary per kernel and
milestone (summarize), what the console printed and cost (console_summary), deferred
probes (deferred_summary), each kernel's initcalls (initcall_summary), and the headline
values --until-ci judges (headline).  Pure functions of the runs' records and their
console logs."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from bringup import stats
from bringup.model.board import Board
from bringup.model.clocks import clock_of
from bringup.parse import deferred as dfparse
from bringup.parse import initcalls as icparse
from bringup.parse import milestones as ms
from bringup.parse.errors import ParseError
from bringup.util import clock, environment

GUEST_REFERENCE = "kernel clock"  # on the instruction clock: times are the kernel's own printk times


def reference(rec: dict, rules: ms.Rules, guest: bool = False) -> tuple[str, float]:
    """Times are reported from the reference milestone (the start of loading the kernel
    when a bootloader loaded it: seed 002's reference) when the boot reached it, else from t0.
    guest (the instruction clock): from the kernel's clock zero; a time is a printk time."""
    if guest:
        return GUEST_REFERENCE, 0.0
    ref = rules.reference()
    m = rec.get("milestones", {})
    if ref is not None and ref.name in m and m[ref.name]["host_s"] is not None:
        return ref.name, m[ref.name]["host_s"]
    return "t0", 0.0


def _disturbed(r: dict) -> str | None:
    return (r.get("host") or {}).get("disturbed")


def summarize(
    board: Board, recs: list[dict], rules: ms.Rules, kernels: list[str], places: dict[str, str] | None = None
) -> dict:
    """Statistics per kernel and milestone over the runs that count: runs redone
    because the host was disturbed are listed apart (`disturbed`), not used.
    places: run id -> the labgrid place it ran on; then each milestone's values
    carry their places (`places`), for the report's test of place as a factor."""
    out: dict[str, Any] = {"board": board.name, "created": clock.now(), "kernels": {}}
    ck = clock_of(board)
    guest = ck.deterministic  # the instruction clock: the kernel's printk times are the measurement
    out["clock"] = ck.record()
    out["environment"] = environment.of_board(board)
    for kernel_id in kernels:
        out["kernels"][kernel_id] = _kernel_summary([r for r in recs if r["kernel"] == kernel_id], rules, guest, places)
    return out


def _kernel_summary(mine: list[dict], rules: ms.Rules, guest: bool, places: dict[str, str] | None) -> dict:
    """One kernel's part of the summary, from its runs (redone ones marked)."""
    runs = [r for r in mine if not r.get("redone")]
    ok = [r for r in runs if r["status"] == "ok"]
    refs = {reference(r, rules, guest)[0] for r in ok}
    per = {}
    for m in rules.milestones:
        st = _milestone_stats(m, ok, rules, guest, places)
        if st is not None:
            per[m.name] = st
    # the time hidden before the kernel's clock and the printk lag compare the host's clock with the
    # kernel's: on the instruction clock the kernel's clock is the measurement, they mean nothing
    hidden = [r["hidden_at_zero_s"] for r in ok if r.get("hidden_at_zero_s") is not None and not guest]
    lags = [r["printk_lag_ms"] for r in ok if r.get("printk_lag_ms") and not guest]
    return {
        "runs": len(runs),
        "ok": len(ok),
        "failed": len(runs) - len(ok),
        "reference": refs.pop() if len(refs) == 1 else ("mixed" if refs else None),
        "kernelrelease": ok[0]["kernelrelease"] if ok else None,
        "milestones": per,
        "hidden_at_zero_s": stats.summarize(hidden),
        "printk_lag_ms": {
            "median": stats.summarize([x["median"] for x in lags]),
            "p95": stats.summarize([x["p95"] for x in lags]),
        }
        if lags
        else None,
        "failures": [{"run_id": r["run_id"], "error": r["error"]} for r in runs if r["status"] != "ok"],
        "run_ids": [r["run_id"] for r in runs],
        "disturbed": [{"run_id": r["run_id"], "error": _disturbed(r)} for r in mine if r.get("redone")],
    }


def _milestone_stats(
    m: ms.Milestone, ok: list[dict], rules: ms.Rules, guest: bool, places: dict[str, str] | None
) -> dict | None:
    """One milestone's statistics over a kernel's good runs; None when no run has its time."""
    vals: list[float] = []
    hosts: list[float] = []
    rnds: list[int] = []
    plc: list[str] = []
    pk: list[float] = []
    for r in ok:
        f = r["milestones"].get(m.name)
        if not f or f["host_s"] is None or (guest and f["printk_s"] is None):
            continue  # on the instruction clock a milestone without a printk time has no time
        hosts.append(f["host_s"] - reference(r, rules)[1])
        vals.append(f["printk_s"] if guest else hosts[-1])
        rnds.append(r.get("round") or r.get("run_index") or len(rnds) + 1)
        plc.append((places or {}).get(r["run_id"], ""))
        if f["printk_s"] is not None:
            pk.append(f["printk_s"])
    if not vals:
        return None
    return {
        "label": m.label,
        "host": stats.summarize(hosts),
        "printk": stats.summarize(pk),
        "values": [round(v, 6) for v in vals],
        "rounds": rnds,
        "places": plc if places else None,
    }


STAMP_RE = re.compile(r"^\[\s*-?\d+\.\d+\s+-?\d+\.\d+\] ?")  # console.log's "[abs delta] " (console.py)


def baud_of(console: str) -> int | None:
    """The baud rate of a console= argument ('ttyAMA0,115200n8' -> 115200), or None."""
    m = re.search(r",(\d+)", console)
    return int(m.group(1)) if m else None


def console_bytes(log: Path | bytes, upto: int) -> tuple[int, int]:
    """(all bytes, the kernel's bytes) a console printed up to and including line
    `upto` of a run's console.log, each line counted with the CR LF a serial console
    sends; the kernel's from its first line with a printk time."""
    total = kernel = 0
    in_kernel = False
    data = log if isinstance(log, bytes) else Path(log).read_bytes()
    for n, raw in enumerate(io.BytesIO(data), 1):  # lines as a file gives them: split at LF only
        if n > upto:
            break
        text = STAMP_RE.sub("", raw.decode("utf-8", errors="replace").rstrip("\r\n"), count=1)
        size = len(text.encode("utf-8")) + 2
        total += size
        in_kernel = in_kernel or ms.PRINTK_RE.match(text) is not None
        kernel += size if in_kernel else 0
    return total, kernel


def log_key(r: dict) -> str:
    """The key of a run's console.log among a study's: every kernel of a round has the same
    run id (its directory's name under the kernel's own records)."""
    return f"{r['kernel']}/{r['run_id']}"


def _log(r: dict, recdir: Path, logs: dict[str, bytes] | None) -> bytes:
    """A run's console.log: the copy read once after its boot when there is one, else the file."""
    if logs is not None and log_key(r) in logs:
        return logs[log_key(r)]
    return (recdir / "boot" / r["run_id"] / r["log"]).read_bytes()


def console_summary(
    recs: list[dict], recdir: Path, rules: ms.Rules, console: str, logs: dict[str, bytes] | None = None
) -> dict | None:
    """What the console printed before user space (up to the after_initcalls milestone's
    line) in each good run, and what that costs at the console's baud rate: 10 bits a
    character (start, 8 data, stop).  QEMU's emulated UART is not rate-limited, so a
    QEMU boot does not pay it; a real board's serial line does.  logs: run id -> its
    console.log, read once after the boot (boot_timing); else the files are read."""
    end = next((m.name for m in rules.milestones if m.after_initcalls), None)
    totals: list[float] = []
    kernel: list[float] = []
    for r in recs:
        hit = r["milestones"].get(end) if end else None
        if r["status"] != "ok" or r.get("redone") or not hit:
            continue
        try:
            t, k = console_bytes(_log(r, recdir, logs), hit["line"])
        except OSError:
            continue
        totals.append(t)
        kernel.append(k)
    if not totals:
        return None
    baud = baud_of(console)
    med = stats.summarize(totals)
    assert med is not None
    return {
        "until": end,
        "bytes": med,
        "kernel_bytes": stats.summarize(kernel),
        "baud": baud,
        "cost_s": round(med["median"] * 10 / baud, 6) if baud else None,
    }


def deferred_summary(recs: list[dict], recdir: Path, logs: dict[str, bytes] | None = None) -> list[dict]:
    """The devices whose probe was deferred in the good runs (parse/deferred.py), each
    with the runs that printed it: most boots print none (a kernel says it only for
    `deferred probe pending` at the timeout, or with initcall_debug / dynamic debug)."""
    devices: dict[str, dict] = {}
    for r in recs:
        if r["status"] != "ok" or r.get("redone"):
            continue
        try:
            res = dfparse.parse_deferred(_log(r, recdir, logs), r["log"])
        except (OSError, ParseError):
            continue
        for d in res["devices"]:
            new = {"device": d["device"], "bus": None, "driver": None, "reason": None, "kinds": [], "runs": 0}
            o = devices.setdefault(d["device"], {**new, "events": 0})
            for f in ("bus", "driver", "reason"):
                o[f] = o[f] or d[f]
            o["kinds"] += [k for k in d["kinds"] if k not in o["kinds"]]
            o["runs"] += 1
            o["events"] += d["events"]
    return list(devices.values())


def initcall_summary(
    recs: list[dict], recdir: Path, system_map: Path | None, rules: ms.Rules, logs: dict[str, bytes] | None = None
) -> dict:
    """One kernel's initcalls over its good runs (those in the statistics), from each
    run's console.log (parse/initcalls.py), named and levelled from the kernel's
    System.map when its initcalls were printed as addresses (no CONFIG_KALLSYMS).
    An initcall is `fn` (with ` [module]` when the kernel named one); one that ran
    twice in a run counts with the sum of its times.  Per run besides: the time from
    the reference to the after_initcalls milestone and to the kernel's clock zero (the
    time before the kernel clock), for the report's attribution."""
    smap = icparse.system_map(system_map.read_text(errors="replace")) if system_map and system_map.exists() else None
    end = next((m.name for m in rules.milestones if m.after_initcalls), None)
    runs = [r for r in recs if r["status"] == "ok" and not r.get("redone")]
    calls: dict[str, dict] = {}
    out: dict[str, Any] = {
        "runs": [],
        "rounds": [],
        "count": [],
        "total_us": [],
        "end_s": [],
        "before_clock_s": [],
        "hidden_at_zero_s": [],
        "unresolved": 0,
        "format": None,
        "end_milestone": end,
        "calls": [],
    }
    for i, r in enumerate(runs):
        log = recdir / "boot" / r["run_id"] / r["log"]
        try:
            res = icparse.parse_initcalls(_log(r, recdir, logs), str(log))
        except (OSError, ParseError):
            res = {"initcalls": [], "format": None}
        if smap is not None:
            out["unresolved"] += icparse.resolve(res["initcalls"], smap)
        out["format"] = out["format"] or res["format"]
        _add_run(out, r, i, res["initcalls"], rules, end)
        _add_calls(calls, res["initcalls"], i, len(runs))
    out["calls"] = list(calls.values())
    return out


def _add_run(out: dict, r: dict, i: int, initcalls: list[dict], rules: ms.Rules, end: str | None) -> None:
    """One run's line of initcall_summary: its count and total of initcalls, the time from
    the reference to the end milestone and to the kernel's clock zero."""
    _, ref = reference(r, rules)
    hit = r["milestones"].get(end) if end else None
    out["runs"].append(r["run_id"])
    out["rounds"].append(r.get("round") or i + 1)
    out["count"].append(len(initcalls))
    out["total_us"].append(sum(e["us"] or 0 for e in initcalls))
    end_t = clock_time(r, hit, rules) if hit else None  # printk time on the instruction clock
    out["end_s"].append(round(end_t, 6) if end_t is not None else None)
    cz = r.get("clock_zero_host_s")
    # on the instruction clock times start at the kernel's clock zero: nothing before it is measured
    out["before_clock_s"].append(round(cz - ref, 6) if cz is not None and not on_guest_clock(r) else None)
    out["hidden_at_zero_s"].append(r.get("hidden_at_zero_s"))


def _add_calls(calls: dict[str, dict], initcalls: list[dict], i: int, n: int) -> None:
    """Run i's initcalls (of n runs) into the calls by name: one that ran twice in a run
    counts with the sum of its times."""
    for e in initcalls:
        key = e["fn"] + (f" [{e['module']}]" if e["module"] else "")
        c = calls.setdefault(
            key,
            {
                "fn": e["fn"],
                "module": e["module"],
                "object": e.get("object"),
                "level": e.get("level"),
                "us": [None] * n,
                "start_s": [None] * n,
                "rc": None,
            },
        )
        if e["us"] is not None:
            c["us"][i] = (c["us"][i] or 0) + e["us"]
        if c["start_s"][i] is None:
            c["start_s"][i] = e["start_s"]
        if e["rc"]:
            c["rc"] = e["rc"]


def headline(recs: list[dict], kernels: list[str], rules: ms.Rules) -> dict[str, dict[str, dict[int, float]]]:
    """The headline values of boot timing for --until-ci: the milestones the management
    summary states (flagged `summary` in the milestone rules; the end milestone when
    none is), as boot to <milestone> -> kernel -> round -> seconds from the reference,
    over the good runs that count (not the redone ones)."""
    shown = rules.flagged("summary") or rules.flagged("end")
    out: dict[str, dict[str, dict[int, float]]] = {}
    for m in shown:
        per = out.setdefault(f"boot to {m.label}", {k: {} for k in kernels})
        for r in recs:
            f = r["milestones"].get(m.name) if r["status"] == "ok" and not r.get("redone") else None
            t = clock_time(r, f, rules) if f else None
            if t is not None and r["kernel"] in per:
                per[r["kernel"]][r.get("round") or r.get("run_index") or len(per[r["kernel"]]) + 1] = t
    return out


def on_guest_clock(r: dict) -> bool:
    """A boot record measured on the instruction clock (its times: the kernel's printk times)."""
    return (r.get("clock") or {}).get("kind") == "instructions"


def clock_time(r: dict, hit: dict, rules: ms.Rules) -> float | None:
    """A milestone's time on the run's clock: its printk time on the instruction clock,
    else its host time from the reference."""
    if on_guest_clock(r):
        return hit.get("printk_s")
    return hit["host_s"] - reference(r, rules)[1] if hit["host_s"] is not None else None
