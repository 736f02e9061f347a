"""Boot timing: boot each kernel several times over its serial console and
time the milestones.

  boot_timing()  runs interleaved across kernels (A B A B ...), each one a
                 BootSession (session.py) on a fresh target from the caller's
                 factory, statistics, logs/<board>/boot-timing.json and the
                 seed-002 table.  The rounds are the round engine's
                 (boot/rounds.py): with several places (identical boards of a
                 labgrid lab) one worker per place runs whole rounds in
                 parallel, and the summary says which place ran each round and
                 each value; on a local board, `jobs` workers.

The engine talks to a Target (target.py) and a Console (console.py); it does
not know whether the target is QEMU or a board on the bench.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bringup import records, stats
from bringup.boot import rounds
from bringup.boot.session import PATHS, ROOTS, BootOptions, boot_once
from bringup.boot.target import Place, TargetFactory
from bringup.errors import BringupError
from bringup.model.board import Board
from bringup.model.bootpath import check_boot_path, check_root
from bringup.model.clocks import clock_of
from bringup.model.milestones import load_rules
from bringup.model.profiles import Profile
from bringup.parse import deferred as dfparse
from bringup.parse import initcalls as icparse
from bringup.parse import milestones as ms
from bringup.parse.errors import ParseError
from bringup.util import clock, environment, lock, space

# --- runs, statistics, summary ---------------------------------------------


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


MAX_REDO = rounds.MAX_REDO  # a run on a disturbed host is done again at most this many times


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
    for kid in kernels:
        mine = [r for r in recs if r["kernel"] == kid]
        runs = [r for r in mine if not r.get("redone")]
        ok = [r for r in runs if r["status"] == "ok"]
        per = {}
        refs = {reference(r, rules, guest)[0] for r in ok}
        for m in rules.milestones:
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
            if vals:
                per[m.name] = {
                    "label": m.label,
                    "host": stats.summarize(hosts),
                    "printk": stats.summarize(pk),
                    "values": [round(v, 6) for v in vals],
                    "rounds": rnds,
                    "places": plc if places else None,
                }
        # the time hidden before the kernel's clock and the printk lag compare the host's clock with the
        # kernel's: on the instruction clock the kernel's clock is the measurement, they mean nothing
        hidden = [r["hidden_at_zero_s"] for r in ok if r.get("hidden_at_zero_s") is not None and not guest]
        lags = [r["printk_lag_ms"] for r in ok if r.get("printk_lag_ms") and not guest]
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
    check_boot_path(board, path)  # 'direct' on a real board, 'u-boot' without [uboot]
    check_root(board, root)  # an external NFS server's export directory that is not there
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
    target_for: TargetFactory | None,
    runs: int = 5,
    path: str | None = None,
    only: list | None = None,
    until_ci: float | None = None,
    max_rounds: int = stats.UNTIL_CI_MAX_ROUNDS,
    timeout_factor: float = 1.0,
    root: str = "ramdisk",
    say=print,
    rootfs_ref: records.RootfsRef | None = None,
    guard: bool = True,
    profile: Profile | None = None,
    places: Sequence[Place] | None = None,
    jobs: int = 1,
) -> dict:
    """Boot each kernel `runs` times.  initrd: the board's ramdisk (the caller builds
    it: build.rootfs; rootfs_ref is its record's reference, kept in the summary);
    target_for(run_dir): a fresh target for one boot (bringup.targets.for_board),
    or places (bringup.targets.places): where the boots go, each held for the whole
    run (a labgrid place: acquired once, released at the end).  With several
    places, one worker per place takes whole rounds in parallel (rounds.Dealer);
    a set-up fault or Ctrl-C on one stops them all, and every place is released.
    jobs: on a board that is not a labgrid board, up to `jobs` boots at once, each
    worker booting fresh targets of its own (without the guard: rounds.check()).

    Rounds: the round engine (boot/rounds.py: run()) boots every kernel once per
    round, in its balanced orders; this passes it one kernel's boot (boot_once into
    the round's run directory), the headline values --until-ci judges (headline())
    and what becomes of each run (its boot.json with round and host, its line).
    With guard, the host-load guard (util/hostload.py) judges every run; a good run
    on a disturbed host is done again, up to MAX_REDO times, and the redone run is
    listed as disturbed instead of entering the statistics.

    until_ci (a width in %): more rounds until the 95 % interval of every headline
    difference (the milestones the summary states: headline()) is that narrow, at
    most max_rounds: the rule of stats.UntilCI; the summary's `stopped` says why
    the rounds stopped.

    profile: a boot profile (configs/profiles/): its arguments for each kernel's version
    are added to the command line, the milestones it makes optional are not required,
    and with `initcalls` each kernel's initcalls over the runs go into the summary
    (initcall_summary).  The summary of a profile other than `timing` is its own file."""
    path = path or board.boot
    rule = rounds.rule(runs, until_ci, max_rounds)  # refused here, before any work
    if places is None:
        if target_for is None:
            raise ValueError("boot_timing: give target_for or places")
        places = [rounds.Plain(target_for)]
    rounds.check(places, jobs, guard)  # refused here, before any work
    builds = plan(board, logs, path, root, only)
    kernels = list(builds)
    rules = load_rules(board.milestones)
    rules = rules.for_root(root)  # e.g. an NFS boot must show the mount
    pname = profile.name if profile is not None else "timing"
    if profile is not None:
        rules = rules.optional(profile.spec.optional_milestones)
    args = {kid: profile.cmdline(_version(builds[kid][0])) if profile else "" for kid in kernels}
    initrd = Path(initrd)
    rd = rootfs_ref or records.RootfsRef(
        file=initrd.name, sha256=hashlib.sha256(initrd.read_bytes()).hexdigest(), inputs_key=None
    )
    names = [p.name for p in places]
    tag = f"{'-nfs' if root == 'nfs' else ''}{'' if pname == 'timing' else '-' + pname}"
    bdir = Path(logs) / board.name
    with lock.board(bdir, "boot-timing", say=say):  # one measurement of a board at a time
        records.sets.tidy(bdir, say)
        space.check(bdir, BOOT_BYTES * len(kernels) * rule.limit, "boot-timing")
        return _measure(
            board,
            logs,
            builds,
            kernels,
            rules,
            rule,
            path,
            root,
            tag,
            args,
            timeout_factor,
            places,
            jobs,
            guard,
            say,
            names,
            runs,
            rd,
            profile,
            pname,
            initrd,
        )


BOOT_BYTES = 2 * 1024 * 1024  # what one boot's run directory holds, about (console logs, records; tftp/ is removed)


def _measure(
    board,
    logs,
    builds,
    kernels,
    rules,
    rule,
    path,
    root,
    tag,
    args,
    timeout_factor,
    places,
    jobs,
    guard,
    say,
    names,
    runs,
    rd,
    profile,
    pname,
    initrd,
) -> dict:
    recs, out, place_of_run, texts = _rounds(
        board, builds, initrd, rules, rule, path, root, tag, args, timeout_factor, places, jobs, guard, say
    )
    taken = out.rounds()
    summary = summarize(board, recs, rules, kernels, place_of_run if any(names) else None)
    summary["path"] = path
    summary["root"] = root
    summary["runs_requested"] = runs
    for kid in kernels:
        summary["kernels"][kid]["build_key"] = builds[kid][0].get("key")
    summary["rootfs"] = rd.model_dump()
    summary["order"] = [out.order[r] for r in taken]
    summary["round_places"] = [out.place_of[r] for r in taken] if any(names) else []
    summary["places"] = [n for n in names if n]
    summary["stopped"] = rule.stopped
    summary["profile"] = pname
    summary["cmdline_args"] = args
    for kid in kernels:
        mine = [r for r in recs if r["kernel"] == kid]
        summary["kernels"][kid]["console"] = console_summary(mine, builds[kid][1], rules, board.console, texts)
        summary["kernels"][kid]["deferred"] = deferred_summary(mine, builds[kid][1], texts)
    if profile is not None and profile.record_initcalls:
        for kid in kernels:
            rec_b, recdir = builds[kid]
            smap = rec_b.get("artifacts", {}).get("System.map")
            say(f"  {kid}: reading the initcalls of its runs")
            summary["kernels"][kid]["initcalls"] = initcall_summary(
                [r for r in recs if r["kernel"] == kid], recdir, recdir / smap if smap else None, rules, texts
            )
    failed = sum(k["failed"] for k in summary["kernels"].values())
    name = records.boot_timing_name(root, failed=failed > 0, profile=pname)
    bdir = Path(logs) / board.name
    # the summary lands with its runs' records (written as each run ended, in directories of their own)
    with records.ResultSet(bdir, name.removesuffix(".json").removesuffix("-failed")) as rset:
        rset.write(bdir / name, summary, records.BootTiming)
        if not failed:  # a failure record of an earlier invocation is stale now
            rset.remove(bdir / records.boot_timing_name(root, failed=True, profile=pname))
    return summary


def _rounds(
    board, builds, initrd, rules, rule, path, root, tag, args, timeout_factor, places, jobs, guard, say
) -> tuple[list[dict], rounds.Outcome[dict], dict[str, str], dict[str, bytes]]:
    """boot_timing()'s rounds on the round engine: every run's record (redone ones marked),
    the engine's outcome, the place of each run (by run id) on labgrid places, and each
    good run's console.log, read once as its boot ends, for the summaries that read the
    console's lines again (console_summary, deferred_summary, initcall_summary)."""
    kernels = list(builds)
    stamp = clock.stamp()

    def run_dir(kid: str, suffix: str) -> Path:
        return builds[kid][1] / "boot" / f"{stamp}-{path}{tag}{suffix}"

    logs: dict[str, bytes] = {}

    def boot(run: rounds.Run) -> dict:
        rec_b, recdir = builds[run.kernel]
        d = run_dir(run.kernel, run.suffix)
        r = boot_once(
            board,
            run.kernel,
            rec_b,
            recdir,
            initrd,
            d,
            run.target_for(d),
            rules,
            BootOptions(
                path=path,
                root=root,
                timeout_factor=timeout_factor,
                run_index=run.round,
                extra_args=args[run.kernel],
                cancel=run.cancel,
            ),
        )
        if r.get("status") == "ok" and r.get("log"):
            with contextlib.suppress(OSError):  # the summaries read the file when this fails
                # once, while the page cache holds it; keyed by kernel too: a round's run ids are alike
                logs[log_key(r)] = (d / r["log"]).read_bytes()
        return r

    place_of_run: dict[str, str] = {}
    several = len(places) > 1

    def on_done(done: rounds.Done[dict]) -> None:
        """Each attempt's record gets its round and the guard's verdict, is written, and said."""
        r = done.result
        r["round"] = done.round
        if done.host is not None:
            r["host"] = done.host
        records.write(run_dir(done.kernel, done.run.suffix) / "boot.json", r, records.Boot)
        if done.place is not None:
            place_of_run[r["run_id"]] = done.place
        on = f" on {done.place}" if several and done.place else ""
        done.run.say(_run_line(r, done.round, rule.limit, rules, on))
        if done.redone:
            r["redone"] = True  # not in the statistics; listed as disturbed

    out = rounds.run(
        kernels,
        rule,
        boot,
        places=places,
        jobs=jobs,
        guard=guard,
        headline=lambda kept: headline([d.result for d in kept], kernels, rules),
        redo_if=lambda r: r["status"] == "ok",  # a failed boot is not done again
        on_done=on_done,
        label="  boot rounds",
        say=say,
    )
    return [d.result for d in out.runs], out, place_of_run, logs


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


def _version(build_rec: dict) -> str:
    return build_rec.get("version") or build_rec.get("kernelrelease") or ""


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
        _, ref = reference(r, rules)
        hit = r["milestones"].get(end) if end else None
        out["runs"].append(r["run_id"])
        out["rounds"].append(r.get("round") or i + 1)
        out["count"].append(len(res["initcalls"]))
        out["total_us"].append(sum(e["us"] or 0 for e in res["initcalls"]))
        end_t = clock_time(r, hit, rules) if hit else None  # printk time on the instruction clock
        out["end_s"].append(round(end_t, 6) if end_t is not None else None)
        cz = r.get("clock_zero_host_s")
        # on the instruction clock times start at the kernel's clock zero: nothing before it is measured
        out["before_clock_s"].append(round(cz - ref, 6) if cz is not None and not on_guest_clock(r) else None)
        out["hidden_at_zero_s"].append(r.get("hidden_at_zero_s"))
        for e in res["initcalls"]:
            key = e["fn"] + (f" [{e['module']}]" if e["module"] else "")
            c = calls.setdefault(
                key,
                {
                    "fn": e["fn"],
                    "module": e["module"],
                    "object": e.get("object"),
                    "level": e.get("level"),
                    "us": [None] * len(runs),
                    "start_s": [None] * len(runs),
                    "rc": None,
                },
            )
            if e["us"] is not None:
                c["us"][i] = (c["us"][i] or 0) + e["us"]
            if c["start_s"][i] is None:
                c["start_s"][i] = e["start_s"]
            if e["rc"]:
                c["rc"] = e["rc"]
    out["calls"] = list(calls.values())
    return out


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


def _run_line(r: dict, rnd: int, limit: int, rules: ms.Rules, on: str = "") -> str:
    if r["status"] != "ok":
        return f"  run {rnd}/{limit} {r['kernel']}{on}: FAILED: {r['error']}"
    ref_name, _ = reference(r, rules, on_guest_clock(r))
    m = r["milestones"]
    parts = []
    for x in rules.flagged("progress"):
        t = clock_time(r, m[x.name], rules) if x.name in m else None
        if t is not None:
            parts.append(f"{x.name} {t:.3f}s" if on_guest_clock(r) else f"{x.name} {t:.2f}s")
    return f"  run {rnd}/{limit} {r['kernel']}{on}: ok ({', '.join(parts)}; from {ref_name})"


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
        test = stats.t_test([x for x, _ in pairs], [y for _, y in pairs], paired=True)
    else:
        test = stats.t_test(va, vb, paired=False)  # the summary's tests (stats.compare), uncorrected here
    mark = "" if test is None else " *" if test["p"] < stats.ALPHA else " (n.s.)"
    return f"{'+' if d >= 0 else '-'} {abs(d):.0f} %{mark}"


def _guest_delta(med0: float | None, med: float | None) -> str:
    if med is None or med0 in (None, 0):
        return "n/a"
    assert med0 is not None
    d = (med - med0) / med0 * 100
    return f"{'+' if d >= 0 else '-'} {abs(d):.1f} %"


def render_table(summary: dict, rules: ms.Rules) -> str:
    kern = list(summary["kernels"])
    refs = {v["reference"] for v in summary["kernels"].values() if v["reference"]}
    ref = rules.reference()
    guest = (summary.get("clock") or {}).get("kind") == "instructions"
    ns = (summary.get("clock") or {}).get("ns_per_instruction")
    ref_label = (
        f"kernel's clock zero: printk times on the instruction clock ({ns} ns per instruction)"
        if guest
        else f"{ref.label} (the bootloader's load command)"
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
            if st and guest and st["printk"]:
                h = st["printk"]  # deterministic: the spread of the runs, not an interval
                spread = (
                    f" (spread {(h['max'] - h['min']) / h['median'] * 100:.2f} %)" if h["n"] > 1 and h["median"] else ""
                )
                cells.append(f"{h['median']:.4f}s{spread}")
                meds.append(h["median"])
            elif st and not guest:
                h = st["host"]
                ci = f" ±{(h['ci95'][1] - h['ci95'][0]) / 2:.2f}" if h["ci95"] else ""
                cells.append(f"{h['median']:.2f}s{ci}")
                meds.append(h["median"])
            else:
                cells.append("-")
                meds.append(None)
        if all(c == "-" for c in cells):
            continue
        deltas = [
            _guest_delta(meds[0], v) if guest else _delta_cell(summary, kern[0], k, m.name, meds[0], v)
            for k, v in zip(kern[1:], meds[1:], strict=True)
        ]
        rows.append([f"... until {m.label}", *cells, *deltas])
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    head = (
        "; the instruction clock is deterministic: a delta is a measured difference, judged in the "
        "report against the A/A floor (docs/clock.md)"
        if guest
        else "; ± is the 95 % confidence half-width; * marks a delta significant at p < 0.05 "
        "(paired t-test of log ratios over the rounds, else Welch's t-test; uncorrected: the report "
        "corrects for the number of tests), (n.s.) one that is not"
    )
    out = [
        f"Boot timing for {summary['board']} ({summary.get('path')}): medians of "
        + ", ".join(f"{k} n={summary['kernels'][k]['ok']}" for k in kern)
        + head,
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
