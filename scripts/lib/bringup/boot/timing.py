"""Boot timing: boot each kernel several times over its serial console and
time the milestones.

  boot_timing()  runs interleaved across kernels (A B A B ...), each one a
                 BootSession (session.py) on a fresh target from the caller's
                 factory, statistics, logs/<board>/boot-timing.json and the
                 seed-002 table.

The engine talks to a Target (target.py) and a Console (console.py); it does
not know whether the target is QEMU or a board on the bench.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bringup import records, stats
from bringup.boot import rounds
from bringup.boot.session import PATHS, ROOTS, boot_once
from bringup.boot.target import Target
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.model.milestones import load_rules
from bringup.parse import milestones as ms
from bringup.util import clock, hostload
from bringup.util.progress import Progress

# --- runs, statistics, summary ---------------------------------------------


def reference(rec: dict, rules: ms.Rules) -> tuple[str, float]:
    """Times are reported from the reference milestone (the start of loading the kernel
    when a bootloader loaded it: seed 002's reference) when the boot reached it, else from t0."""
    ref = rules.reference()
    m = rec.get("milestones", {})
    if ref is not None and ref.name in m and m[ref.name]["host_s"] is not None:
        return ref.name, m[ref.name]["host_s"]
    return "t0", 0.0


MAX_REDO = 2  # a run on a disturbed host is done again at most this many times


def _disturbed(r: dict) -> str | None:
    return (r.get("host") or {}).get("disturbed")


def summarize(board: Board, recs: list[dict], rules: ms.Rules, kernels: list[str]) -> dict:
    """Statistics per kernel and milestone over the runs that count: runs redone
    because the host was disturbed are listed apart (`disturbed`), not used."""
    out: dict[str, Any] = {"board": board.name, "created": clock.now(), "kernels": {}}
    for kid in kernels:
        mine = [r for r in recs if r["kernel"] == kid]
        runs = [r for r in mine if not r.get("redone")]
        ok = [r for r in runs if r["status"] == "ok"]
        per = {}
        refs = {reference(r, rules)[0] for r in ok}
        for m in rules.milestones:
            vals: list[float] = []
            rnds: list[int] = []
            pk: list[float] = []
            for r in ok:
                f = r["milestones"].get(m.name)
                if f and f["host_s"] is not None:
                    vals.append(f["host_s"] - reference(r, rules)[1])
                    rnds.append(r.get("round") or r.get("run_index") or len(rnds) + 1)
                    if f["printk_s"] is not None:
                        pk.append(f["printk_s"])
            if vals:
                per[m.name] = {
                    "label": m.label,
                    "host": stats.summarize(vals),
                    "printk": stats.summarize(pk),
                    "values": [round(v, 6) for v in vals],
                    "rounds": rnds,
                }
        hidden = [r["hidden_at_zero_s"] for r in ok if r.get("hidden_at_zero_s") is not None]
        lags = [r["printk_lag_ms"] for r in ok if r.get("printk_lag_ms")]
        out["kernels"][kid] = {
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
    return out


def plan(
    board: Board, logs: Path, path: str, root: str = "ramdisk", only: list | None = None
) -> dict[str, tuple[dict, Path]]:
    """Check what boot_timing is asked, before anything is built: the kernels to boot,
    with their build records and record directories."""
    if root not in ROOTS:
        raise BringupError(f"root {root!r}: use 'ramdisk' or 'nfs'")
    if path not in PATHS:
        raise BringupError(f"boot path {path!r}: use 'direct' or 'u-boot'")
    if path == "u-boot" and not board.uboot:
        raise BringupError(f"board {board.name}: no [uboot] table, so it cannot boot through U-Boot")
    kernels = [k.id for k in board.kernels if not only or k.id in only]
    if only and set(only) - set(kernels):
        raise BringupError(f"board {board.name}: no kernel {sorted(set(only) - set(kernels))[0]!r}")
    builds = {}
    for kid in kernels:
        recdir = Path(logs) / board.name / kid
        f = recdir / "build.json"
        if not f.exists():
            raise BringupError(f"{board.name}/{kid}: no build record {f} (run: make build-all BOARD={board.name})")
        builds[kid] = (records.read_json(f, "bringup.build"), recdir)
    return builds


def boot_timing(
    board: Board,
    logs: Path,
    initrd: Path,
    target_for: Callable[[Path], Target],
    runs: int = 5,
    path: str | None = None,
    only: list | None = None,
    until_ci: float | None = None,
    max_runs: int = 20,
    timeout_factor: float = 1.0,
    root: str = "ramdisk",
    say=print,
    rootfs_ref: records.RootfsRef | None = None,
    guard: bool = True,
) -> dict:
    """Boot each kernel `runs` times.  initrd: the board's ramdisk (the caller builds
    it: build.rootfs; rootfs_ref is its record's reference, kept in the summary);
    target_for(run_dir): a fresh target for one boot (bringup.targets.for_board).

    Rounds: each round boots every kernel once, in the order of boot/rounds.py.
    With guard, the host-load guard (util/hostload.py) judges every run; a run on
    a disturbed host is done again, up to MAX_REDO times, and the redone run is
    listed as disturbed instead of entering the statistics."""
    path = path or board.boot
    builds = plan(board, logs, path, root, only)
    kernels = list(builds)
    rules = load_rules(board.milestones)
    rules = rules.for_root(root)  # e.g. an NFS boot must show the mount
    initrd = Path(initrd)
    rd = rootfs_ref or records.RootfsRef(
        file=initrd.name, sha256=hashlib.sha256(initrd.read_bytes()).hexdigest(), inputs_key=None
    )
    stamp = clock.stamp()
    baseline = hostload.baseline() if guard else None
    recs: list[dict] = []
    order: list[list[str]] = []
    rnd = 0
    limit = max_runs if until_ci else runs
    stopped = f"{runs} rounds, as asked"
    prog = Progress("  boot rounds", total=limit * len(kernels), unit="boots", say=say)
    while rnd < limit:
        rnd += 1
        order.append(rounds.order(kernels, rnd - 1))  # A B, B A, ...: no kernel always boots first
        for kid in order[-1]:
            rec_b, recdir = builds[kid]
            prefix = recdir / "boot" / f"{stamp}-{path}{'-nfs' if root == 'nfs' else ''}-r{rnd:02d}"
            recs += _boot_guarded(
                lambda run_dir, kid=kid, rec_b=rec_b, recdir=recdir, rnd=rnd: boot_once(
                    board,
                    kid,
                    rec_b,
                    recdir,
                    initrd,
                    run_dir,
                    target_for(run_dir),
                    rules,
                    path=path,
                    root=root,
                    timeout_factor=timeout_factor,
                    run_index=rnd,
                ),
                prefix,
                rnd,
                baseline if guard else None,
                lambda r, rnd=rnd: prog.say(_run_line(r, rnd, limit, rules)),
                prog.say,
            )
            prog.advance()
        if until_ci and rnd >= max(runs, 3) and _precise_enough(recs, kernels, rules, until_ci):
            say(f"95 % confidence intervals within ±{until_ci}% after {rnd} rounds")
            stopped = f"95 % confidence intervals within ±{until_ci} % after {rnd} rounds"
            break
    else:
        if until_ci:
            stopped = f"--max-runs {max_runs} reached before the intervals were within ±{until_ci} %"
    prog.close()
    summary = summarize(board, recs, rules, kernels)
    summary["path"] = path
    summary["root"] = root
    summary["runs_requested"] = runs
    for kid in kernels:
        summary["kernels"][kid]["build_key"] = builds[kid][0].get("key")
    summary["rootfs"] = rd.model_dump()
    summary["order"] = order
    summary["stopped"] = stopped
    failed = sum(k["failed"] for k in summary["kernels"].values())
    records.write(
        Path(logs) / board.name / records.boot_timing_name(root, failed=failed > 0), summary, records.BootTiming
    )
    return summary


def _boot_guarded(boot, prefix: Path, rnd: int, baseline: float | None, report, say) -> list[dict]:
    """One kernel's boot of a round, judged by the host-load guard when a baseline is
    given: done again (at most MAX_REDO times) while the host is disturbed; every
    attempt's record, the redone ones marked `redone` (kept out of the statistics)."""
    out: list[dict] = []
    for attempt in range(1 + (MAX_REDO if baseline is not None else 0)):
        run_dir = prefix.with_name(prefix.name + (f"-redo{attempt}" if attempt else ""))
        before = hostload.snapshot() if baseline is not None else None
        r = boot(run_dir)
        r["round"] = rnd
        if before is not None:
            r["host"] = hostload.judge(before, hostload.snapshot(), baseline)
        records.write(run_dir / "boot.json", r, records.Boot)
        out.append(r)
        report(r)
        if not (_disturbed(r) and r["status"] == "ok" and attempt < MAX_REDO):
            break
        r["redone"] = True  # not in the statistics; listed as disturbed
        say(f"  round {rnd} {r['kernel']}: host disturbed ({_disturbed(r)}): booting it again")
    return out


def _precise_enough(recs, kernels, rules, pct) -> bool:
    end = [m.name for m in rules.milestones if m.end]
    for kid in kernels:
        vals = [
            r["milestones"][end[0]]["host_s"] - reference(r, rules)[1]
            for r in recs
            if r["kernel"] == kid and r["status"] == "ok" and end[0] in r["milestones"]
        ]
        s = stats.summarize(vals)
        if not s or s["ci95_half_pct"] is None or s["ci95_half_pct"] > pct:
            return False
    return True


def _run_line(r: dict, rnd: int, limit: int, rules: ms.Rules) -> str:
    if r["status"] != "ok":
        return f"  run {rnd}/{limit} {r['kernel']}: FAILED: {r['error']}"
    ref_name, ref = reference(r, rules)
    m = r["milestones"]
    parts = []
    for x in rules.flagged("progress"):
        if x.name in m:
            parts.append(f"{x.name} {m[x.name]['host_s'] - ref:.2f}s")
    return f"  run {rnd}/{limit} {r['kernel']}: ok ({', '.join(parts)}; from {ref_name})"


def _delta_cell(summary: dict, base: str, k: str, name: str, med0: float | None, med: float | None) -> str:
    """One delta of the boot table: percent against the base kernel and the test's mark
    (paired by round when both kernels' runs carry their rounds)."""
    if med is None or med0 in (None, 0):
        return "n/a"
    assert med0 is not None
    d = (med - med0) / med0 * 100
    a = summary["kernels"][base]["milestones"].get(name, {})
    b = summary["kernels"][k]["milestones"].get(name, {})
    ra, rb = a.get("rounds"), b.get("rounds")
    va, vb = a.get("values") or [], b.get("values") or []
    if ra and rb and len(ra) == len(va) and len(rb) == len(vb):
        bmap = dict(zip(rb, vb, strict=True))
        pairs = [(x, bmap[r]) for r, x in zip(ra, va, strict=True) if r in bmap]
        test = stats.wilcoxon_paired([x for x, _ in pairs], [y for _, y in pairs])
    else:
        test = stats.mann_whitney(va, vb)
    mark = "" if test is None else " *" if test["p"] < 0.05 else " (n.s.)"
    return f"{'+' if d >= 0 else '-'} {abs(d):.0f} %{mark}"


def render_table(summary: dict, rules: ms.Rules) -> str:
    kern = list(summary["kernels"])
    refs = {v["reference"] for v in summary["kernels"].values() if v["reference"]}
    ref = rules.reference()
    ref_label = (
        f"{ref.label} (the bootloader's load command)"
        if ref is not None and refs == {ref.name}
        else "QEMU start / power-on"
        if refs == {"t0"}
        else "(no successful run)"
        if not refs
        else "mixed references"
    )
    heads = ["", *kern, *(["Delta"] if len(kern) == 2 else [f"Delta {k}" for k in kern[1:]])]
    rows = []
    for m in rules.shown(refs):
        cells, meds = [], []
        for k in kern:
            st = summary["kernels"][k]["milestones"].get(m.name)
            if st:
                h = st["host"]
                ci = f" ±{(h['ci95'][1] - h['ci95'][0]) / 2:.2f}" if h["ci95"] else ""
                cells.append(f"{h['median']:.2f}s{ci}")
                meds.append(h["median"])
            else:
                cells.append("-")
                meds.append(None)
        if all(c == "-" for c in cells):
            continue
        deltas = [_delta_cell(summary, kern[0], k, m.name, meds[0], v) for k, v in zip(kern[1:], meds[1:], strict=True)]
        rows.append([f"... until {m.label}", *cells, *deltas])
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    out = [
        f"Boot timing for {summary['board']} ({summary.get('path')}): medians of "
        + ", ".join(f"{k} n={summary['kernels'][k]['ok']}" for k in kern)
        + "; ± is the 95 % confidence half-width; * marks a delta significant at p < 0.05 "
        "(Wilcoxon signed-rank over the rounds, else Mann-Whitney U; uncorrected: the report "
        "corrects for the number of tests), (n.s.) one that is not",
        f"Time from the {ref_label}:",
        "",
    ]
    out.append("| " + " | ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)) + " |")
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        out.append(
            "| "
            + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
            + " |"
        )
    out.append("")
    for k in kern:
        v = summary["kernels"][k]
        h = v["hidden_at_zero_s"]
        lag = v["printk_lag_ms"]
        extra = []
        if h:
            extra.append(f"time hidden at [0.000000] (kernel printing before its clock ran): median {h['median']:.3f}s")
        if lag and lag["median"]:
            extra.append(f"printk lag median {lag['median']['median']:.1f} ms, p95 {lag['p95']['median']:.1f} ms")
        if v["failed"]:
            extra.append(
                f"{v['failed']} failed run(s), not in the statistics: "
                + "; ".join(f"{f['run_id']}: {f['error']}" for f in v["failures"][:3])
            )
        if extra:
            out.append(f"{k}: " + "; ".join(extra))
    return "\n".join(out) + "\n"
