"""Command line: scripts/bringup <command> ...  (`scripts/bringup --help`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

from bringup import __version__
from bringup.errors import BringupError
from bringup.parse.errors import ParseError
from bringup.util import paths
from bringup.util.switches import ENV_SWITCHES, NO, YES, env_switch


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _host_guard(board=None, jobs: int = 1) -> bool:
    """The host-load guard (util/hostload.py) is on unless BRINGUP_HOST_GUARD=0 (no, false, off),
    and only on the host clock: on the instruction clock a busy host slows a run, not what it measures.
    With --jobs above 1 it is off unless BRINGUP_HOST_GUARD asks for it (parallel boots disturb
    each other; the round engine refuses the guard with parallel local workers)."""
    from bringup.model.clocks import guard_needed

    on = env_switch("BRINGUP_HOST_GUARD") and (board is None or guard_needed(board))
    if on and jobs > 1 and "BRINGUP_HOST_GUARD" not in os.environ:
        _say(f"bringup: --jobs {jobs}: the host-load guard is off (parallel boots would disturb each other)")
        return False
    return on


def clocks_deterministic(b) -> bool:
    from bringup.model.clocks import clock_of

    return clock_of(b).deterministic


def _boot_jobs(b, given: int | None) -> int:
    """--jobs of a measuring step, or the clock's default (model/clocks.py boot_jobs)."""
    from bringup.model.clocks import boot_jobs

    return boot_jobs(b, given)


def _board(a):
    """The board of --board, measured with the clock of --clock (CLOCK=) when given."""
    from bringup.model.board import load_board
    from bringup.model.clocks import with_clock

    return with_clock(load_board(a.board), getattr(a, "clock", None))


def _runs(b, given: int | None, kind: str) -> int:
    """Rounds asked for, or the clock's default (model/clocks.py): boot, lmbench or workload rounds."""
    from bringup.model import clocks

    table = {
        "boot": clocks.DEFAULT_RUNS,
        "lmbench": clocks.DEFAULT_LMBENCH_RUNS,
        "workload": clocks.DEFAULT_WORKLOAD_RUNS,
    }[kind]
    return clocks.default_runs(b, given, table)


def cmd_boards(a) -> int:
    from bringup.model.board import list_boards, load_board

    for name in list_boards():
        try:
            b = load_board(name)
            print(f"{name:20s} {b.arch.name:8s} {', '.join(k.id for k in b.kernels):30s} {b.description}")
        except BringupError as e:
            print(f"{name:20s} (not loadable: {e})")
    return 0


def cmd_show(a) -> int:
    from bringup.model.board import load_board

    b = load_board(a.board)
    print(f"{b.name}: {b.description}")
    print(f"  file: {paths.rel(b.file)}")
    print(f"  arch: {b.arch.name} (ARCH={b.arch.kernel_arch}), CROSS_COMPILE={b.cross_compile or '(host gcc)'}")
    print(f"  image: {b.image.target}{' + uImage' if b.image.uimage else ''}, boot: {b.boot}, memory: {b.memory_mb} MB")
    for k in b.kernels:
        src = k.source
        s = f"debian {src.debian} ({src.suite})" if src.debian else src.url or src.tarball or src.path
        print(
            f"  kernel {k.id}: era {k.era.name}, arch {k.arch.name}, {k.defconfig or k.config_file}"
            f" + {len(k.fragments)} fragment(s), source {s}"
        )
    return 0


def cmd_build_all(a) -> int:
    from bringup.builder.kernel import build_all
    from bringup.model.board import load_board

    b = load_board(a.board)
    if a.cross_compile is not None:
        from bringup.model.values import prefix_problem

        why = prefix_problem(a.cross_compile)
        if why:
            raise BringupError(
                f"--cross-compile {paths.show(a.cross_compile)}: {why}; e.g. arm-linux-gnueabihf- or "
                "/opt/eldk/usr/bin/ppc_8xx-"
            )
        for kid in a.kernel or []:
            b.kernel(kid)  # an unknown --kernel: refused before the toolchain is looked at
        for k in b.kernels:
            k.cross_compile = a.cross_compile
    build_all(b, paths.logs_dir(), paths.cache_dir(), only=a.kernel or None, force=a.force, jobs=a.jobs, say=_say)
    return 0


def cmd_build_report(a) -> int:
    from bringup.model.board import load_board
    from bringup.report import buildtable as buildreport

    b = load_board(a.board)
    recs, missing, left_out = buildreport.load_records(b, paths.logs_dir(), say=_say)
    if a.format != "text":
        for why in left_out:
            _say(f"bringup: left out {why}")
    if a.format == "csv":
        sys.stdout.write(buildreport.render_csv(recs))
    elif a.format == "json":
        print(json.dumps(buildreport.table(recs), indent=2))
    else:
        cost = buildreport.load_cost(b, paths.logs_dir(), recs)
        sys.stdout.write(buildreport.render_text(recs, b.name, missing, left_out, cost))
    return 0


def cmd_build_cost(a) -> int:
    from bringup.measure import buildcost
    from bringup.model.board import load_board
    from bringup.report import buildcost as costreport

    b = load_board(a.board)
    study = None
    if a.aa:
        kernel = a.kernel or b.kernels[-1].id
        b.kernel(kernel)  # an unknown kernel fails here, before any work
        study, b = (b.name, kernel), buildcost.aa_board(b, kernel)
        _say(f"A/A check of the build cost: {study[0]}/{kernel} as arms a and b (board {b.name})")
    elif a.kernel:
        raise BringupError(
            f"--kernel {paths.show(a.kernel, 40)}: only with --aa (the build cost compares every kernel)"
        )
    rec, f, _ = buildcost.measure(
        b,
        paths.logs_dir(),
        paths.cache_dir(),
        runs=a.runs if a.runs is not None else (buildcost.DEFAULT_ROUNDS),
        jobs=a.jobs,
        guard=_host_guard(jobs=a.parallel),
        force=a.force,
        study=study,
        parallel=a.parallel,
        say=_say,
        **_until_ci(a) | ({} if a.max_rounds is not None else {"max_rounds": buildcost.DEFAULT_MAX_ROUNDS}),
    )
    sys.stdout.write(costreport.render(rec))
    print(f"record: {paths.rel(f)}")
    if a.aa:
        claimed = costreport.claims(rec)
        if claimed:
            _say(f"bringup: error: the build cost claims a difference between a kernel and itself: {claimed[0]}")
            return 1
        _say("A/A check of the build cost: no difference claimed (as it must be)")
    return 0


def cmd_boot_timing(a) -> int:
    from bringup import records, targets
    from bringup.boot import rounds
    from bringup.boot import timing as boottiming
    from bringup.builder import rootfs
    from bringup.model.clocks import for_root
    from bringup.model.milestones import load_rules
    from bringup.model.profiles import load_profile
    from bringup.util import lock

    asked = _board(a)
    b = for_root(asked, a.root)  # an NFS root on the host clock (said once the request is checked)
    jobs = _boot_jobs(b, a.jobs)
    profile = load_profile(a.profile)
    places = targets.places(b, targets.parse_places(a.places), say=_say)
    guard = _host_guard(b, jobs)
    rounds.check(places, jobs, guard)  # --jobs that cannot work: refused before any work
    logs = paths.logs_dir()
    boottiming.plan(b, logs, a.path or b.boot, a.root, a.kernel or None)  # fails before the ramdisk is built
    if b is not asked:
        for_root(asked, a.root, _say)
    with lock.board(logs / b.name, "boot-timing", say=_say):  # the ramdisk too: one run of the board at a time
        rd = rootfs.build(b, logs, paths.cache_dir(), say=_say)
        summary = _boot_timing(a, b, logs, rd, places, profile, guard, jobs)
    sys.stdout.write(boottiming.render_table(summary, load_rules(b.milestones)))
    failed = sum(k["failed"] for k in summary["kernels"].values())
    name = records.boot_timing_name(a.root, failed=failed > 0, profile=profile.name)
    _say(f"summary: {paths.rel(paths.logs_dir() / b.name / name)}")
    if failed:
        _say(f"bringup: error: {failed} boot run(s) failed (see above); earlier boot-timing.json kept")
        return 4
    return 0


def _boot_timing(a, b, logs, rd, places, profile, guard, jobs) -> dict:
    from bringup.boot import timing as boottiming

    return boottiming.boot_timing(
        b,
        logs,
        logs / b.name / "rootfs" / rd.file,
        None,
        places=places,
        rootfs_ref=rd.ref(),
        runs=_runs(b, a.runs, "boot"),
        path=a.path,
        only=a.kernel or None,
        **_until_ci(a),
        timeout_factor=a.timeout_factor,
        root=a.root,
        say=_say,
        guard=guard,
        profile=profile,
        jobs=jobs,
    )


def cmd_footprint(a) -> int:
    from bringup import targets
    from bringup.builder.lmbench import parse_spec
    from bringup.measure import footprint

    b = _board(a)
    jobs = _boot_jobs(b, a.jobs)
    places = targets.parse_places(a.places)
    targets.places(b, places)  # PLACES on a board that is not in a lab: refused before any work
    spec = parse_spec(a.lmbench_source, a.lmbench_sha256)
    res = footprint.footprint(
        b,
        paths.logs_dir(),
        paths.cache_dir(),
        only=a.kernel or None,
        mode=a.lmbench,
        timeout_factor=a.timeout_factor,
        lmbench_source=spec,
        lmbench_runs=_runs(b, a.lmbench_runs, "lmbench"),
        say=_say,
        guard=_host_guard(b, jobs),
        places=places,
        **_until_ci(a),
        jobs=jobs,
    )
    sys.stdout.write(footprint.render_footprint(b.name, res))
    sys.stdout.write(footprint.render_lmbench(res))
    return 0


def cmd_workloads(a) -> int:
    from bringup import targets
    from bringup.measure import workloads

    b = _board(a)
    jobs = _boot_jobs(b, a.jobs)
    names = _workload_names(a.workloads)
    if names == []:
        raise BringupError("--workloads none: name the workloads to run, all, or leave it out for the default set")
    res = workloads.workloads(
        b,
        paths.logs_dir(),
        paths.cache_dir(),
        only=a.kernel or None,
        names=names,
        mode=a.mode,
        runs=_runs(b, a.runs, "workload"),
        timeout_factor=a.timeout_factor,
        guard=_host_guard(b, jobs),
        say=_say,
        places=targets.parse_places(a.places),
        **_until_ci(a),
        jobs=jobs,
    )
    sys.stdout.write(workloads.render(res))
    return 0


def cmd_report(a) -> int:
    from bringup.model.board import load_board
    from bringup.report import page as report

    b = load_board(a.board)
    rep = report.write(b, paths.logs_dir(), say=_say)
    print(rep.index.resolve())
    return 0


def _workload_names(text: str | None) -> list[str] | None:
    """--workloads A,B: those; all: ["all"] (every file); none: [] (no workloads step); not given:
    None (the default set: every workload file without default_set = false)."""
    if text is not None and text.strip() == "none":
        return []
    return [n.strip() for n in (text or "").split(",") if n.strip()] or None


def cmd_study(a) -> int:
    from bringup import study, targets
    from bringup.builder.lmbench import parse_spec

    b = _board(a)
    places = targets.parse_places(a.places)
    targets.places(b, places)  # PLACES on a board that is not in a lab: refused before any work
    rep = study.run(
        b,
        paths.logs_dir(),
        paths.cache_dir(),
        runs=_runs(b, a.runs, "boot"),
        path=a.path,
        lmbench=a.lmbench,
        jobs=a.jobs,
        # the measuring steps' boots at once: JOBS (else one per CPU) on the instruction clock; one on the host
        # clock, whose runs would disturb each other (JOBS is then the builds' make -j only)
        boot_jobs=_boot_jobs(b, a.jobs) if clocks_deterministic(b) else 1,
        force=a.force,
        lmbench_source=parse_spec(a.lmbench_source, a.lmbench_sha256),
        lmbench_runs=_runs(b, a.lmbench_runs, "lmbench"),
        root=a.root,
        say=_say,
        guard=_host_guard(b),
        places=places,
        workloads=_workload_names(a.workloads),
        workload_runs=_runs(b, a.workload_runs, "workload"),
        workload_mode=a.workload_mode,
        build_cost=a.build_cost,
        **({"build_cost_runs": a.build_cost_runs} if a.build_cost_runs is not None else {}),
    )
    _say("\n" + rep.summary())
    _say(f"\nThe study of {b.name} is done. Open the report:\n  {rep.index.resolve()}")
    print(rep.index.resolve())
    return 0


def cmd_aa(a) -> int:
    from bringup import aa

    b = _board(a)
    kernel = a.kernel or b.kernels[-1].id
    b.kernel(kernel)  # an unknown kernel fails here, before any work
    # an A/A or A/B check needs two boots per arm at least, to see the spread within an arm too
    result = aa.run(
        b,
        kernel,
        paths.logs_dir(),
        paths.cache_dir(),
        runs=max(2, _runs(b, a.runs, "boot")) if a.runs is None else a.runs,
        lmbench=a.lmbench,
        lmbench_runs=max(2, _runs(b, a.lmbench_runs, "lmbench")) if a.lmbench_runs is None else a.lmbench_runs,
        path=a.path,
        root=a.root,
        say=_say,
        guard=_host_guard(b),
        delay_ms=getattr(a, "delay_ms", 0),
        # boots at once: one per CPU on the instruction clock, one on the host clock
        jobs=_boot_jobs(b, None),
    )
    sys.stdout.write(aa.render(result))
    if a.delay_ms:
        if not result["sensitivity"]["passed"]:
            _say("bringup: error: the sensitivity check failed: the summary did not claim the known cost alone")
            return 1
        return 0
    if result["claims"]:
        _say(f"bringup: error: the summary claims {len(result['claims'])} difference(s) between a kernel and itself")
        return 1
    return 0


def cmd_compare(a) -> int:
    from bringup import records
    from bringup.report import compare

    for out in (a.csv, a.json):  # refused before any work
        if out:
            _check_output_file(Path(out))
    logs = paths.logs_dir()
    how: Any = compare
    if a.boot:
        from bringup.report import bootcompare

        how = bootcompare
    sides = how.resolve(a.a, logs), how.resolve(a.b, logs)
    how.check_sets(*sides, say=_say)  # refused when a record is not as its set wrote it
    c = how.compare(*sides)
    sys.stdout.write(how.render(c, a.top))
    for path, text in ((a.csv, how.to_csv(c) if a.csv else ""), (a.json, how.to_json(c) if a.json else "")):
        if path:
            records.write_text(path, text)
            _say(f"wrote {path}")
    return 0


def _check_output_file(p: Path) -> None:
    """A file the user names to write: its directory exists, and it is not a directory."""
    if p.is_dir():
        raise BringupError(f"{p}: is a directory; name a file to write")
    if not p.parent.is_dir():
        raise BringupError(f"{p}: its directory {p.parent} does not exist")
    if p.exists() and not p.is_file():
        raise BringupError(f"{p}: not a regular file; name a file to write")


def _check_input_file(p) -> None:
    """A file the user names to read: a readable regular file (no directory, FIFO or device)."""
    from bringup.model.base import regular_file

    regular_file(p)


def cmd_parse(a) -> int:
    from pathlib import Path

    from bringup.model.milestones import load_rules
    from bringup.parse import bootlog, lmbench

    if a.file != "-":
        _check_input_file(Path(a.file))
    if a.map and a.what != "initcalls":
        raise BringupError("--map: only for 'parse initcalls'")
    if a.map:
        _check_input_file(Path(a.map))
    name = "standard input" if a.file == "-" else a.file
    with contextlib.ExitStack() as stack:  # streamed: bounded memory for any size of input
        f = sys.stdin.buffer if a.file == "-" else stack.enter_context(open(a.file, "rb"))
        if a.what == "initcalls":
            from bringup.parse import initcalls

            res = initcalls.parse_initcalls(f, name)
            if a.map:
                smap = _system_map(a.map)
                res["unresolved"] = initcalls.resolve(res["initcalls"], smap)
            if not a.json:
                sys.stdout.write(_initcall_table(res, a.top))
                return 0
        elif a.what == "bootlog":
            rules = load_rules()
            if a.board:
                from bringup.model.board import load_board

                rules = load_rules(load_board(a.board).milestones)
            res = bootlog.parse_bootlog(f, rules, name)
        else:
            res = lmbench.parse_lmbench(f, name)
            if res["format"] == "runner":  # the runner's blocks are bringup's benchmarks: their groups
                from bringup.model.benchset import load_set

                groups = {b.name: b.group for b in load_set().bench}
                for r in res["results"]:
                    for bname, b in r["benchmarks"].items():
                        b["group"] = groups.get(bname, b["group"])
    print(json.dumps(res, indent=2))
    return 0


def _system_map(file: str) -> tuple:
    """--map FILE: its symbols (parse/initcalls.py system_map); a file with none is refused."""
    from bringup.parse import initcalls

    smap = initcalls.system_map(Path(file).read_text(errors="replace"))
    if not smap[0] and not smap[1]:
        raise BringupError(f"--map {file}: not a System.map (no '<address> <type> <symbol>' line)")
    return smap


def cmd_import(a) -> int:
    from bringup import importer
    from bringup.model.board import load_board

    b = load_board(a.board)
    importer.check_kernel_id(b, a.kernel, a.replace)  # before the file is read
    importer.check_label(a.label)
    if a.what == "lmbench" and a.root is not None:
        raise BringupError("--root: only for a boot log (the boot table it joins)")
    if a.what == "bootlog" and a.host is not None:
        raise BringupError("--host: only for an lmbench summary (the host column to import)")
    if a.what == "bootlog":
        res = importer.import_bootlog(
            b, paths.logs_dir(), Path(a.file), a.kernel, a.label, a.replace, a.root or "ramdisk", say=_say
        )
    else:
        res = importer.import_lmbench(b, paths.logs_dir(), Path(a.file), a.kernel, a.label, a.host, a.replace, say=_say)
    _say(f"import: {b.name}/{a.kernel} from {a.file} ({res['format']}); make report BOARD={b.name} shows it")
    return 0


VALIDATE_KINDS = ("board", "arch", "era", "milestones", "lmbench", "clock", "profile", "workload", "record")


def _kind_of(f: Path) -> str:
    """What a data file is, from where it lives: configs/<kind>/, configs/milestones.toml,
    configs/lmbench.toml, configs/clock.toml, a .json record; any other .toml is a board file."""
    if f.suffix == ".json":
        return "record"
    if f.name in ("milestones.toml", "lmbench.toml", "clock.toml"):
        return f.stem
    folder = f.absolute().parent.name
    return {"arch": "arch", "era": "era", "profiles": "profile", "workloads": "workload"}.get(folder, "board")


def cmd_validate(a) -> int:
    """Check data files and records as the steps that read them would, without doing any work."""
    from bringup import records
    from bringup.model import benchset, board, clocks, milestones, profiles, workload

    for name in a.files:
        f = Path(name)
        kind = a.kind or _kind_of(f)
        _check_input_file(f)
        if kind == "board":
            board.load_board(str(f) if "/" in name or name.endswith(".toml") else f"./{name}")
        elif kind in ("arch", "era"):
            (board.load_arch if kind == "arch" else board.load_era)(f.stem, f.absolute().parent.parent, file=f)
        elif kind == "milestones":
            milestones.load_rules(file=f)
        elif kind == "lmbench":
            benchset.load_set(f)
        elif kind == "clock":
            clocks.load_floors(f)
        elif kind == "profile":
            profiles.load_profile_file(f)
        elif kind == "workload":
            workload.load(f)
        else:
            data = records.load(f)
            schema = data.get("schema") if isinstance(data, dict) else None
            rkind = schema.partition("/")[0] if isinstance(schema, str) else ""
            if rkind not in records.KINDS:
                rkind = "bringup.build"  # its checks name what is wrong with the schema field
            records.read_json(f, rkind)
        print(f"{name}: a valid {kind} file" if kind != "record" else f"{name}: a valid record")
    return 0


def _initcall_table(res: dict, top: int) -> str:
    """`parse initcalls` without --json: the wording, the total and the slowest initcalls."""
    out = [
        f"{res['count']} initcalls ({res['timed']} with a duration), {res['total_us'] / 1000:.1f} ms in all; "
        f"wording: {res['format_words']}; text: {res['text']['assumed']}"
    ]
    if res["unfinished"]:
        out.append("still running where the log ends: " + ", ".join(u["fn"] for u in res["unfinished"][:10]))
    if res.get("problems"):
        out.append("left wrong: " + ", ".join(f"{p['symbol']} ({p['why']})" for p in res["problems"][:10]))
    timed = sorted((e for e in res["initcalls"] if e["us"] is not None), key=lambda e: -e["us"])[:top]
    if timed:
        out += ["", f"{'ms':>10}  {'start s':>10}  {'level':<8}  initcall"]
        for e in timed:
            start = "" if e["start_s"] is None else f"{e['start_s']:.6f}"
            mod = f" [{e['module']}]" if e["module"] else ""
            rc = f" (returned {e['rc']})" if e["rc"] else ""
            out.append(f"{e['us'] / 1000:>10.3f}  {start:>10}  {e['level'] or '':<8}  {e['fn']}{mod}{rc}")
    return "\n".join(out) + "\n"


def cmd_doc(a) -> int:
    from bringup.model.boarddoc import board_schema_json, reference_markdown

    if a.what == "errors":
        from bringup.util import errdoc

        sys.stdout.write(errdoc.markdown())
    else:
        sys.stdout.write(reference_markdown() if a.what == "board-files" else board_schema_json())
    return 0


UNTIL_CI_DEFAULT = object()  # --until-ci without a width: stats.UNTIL_CI_PCT (a string would go through `type`)


def _until_ci(a) -> dict:
    """The --until-ci and --max-rounds of a command, as keyword arguments (the defaults
    live in stats: UNTIL_CI_PCT, UNTIL_CI_MAX_ROUNDS)."""
    from bringup import stats

    out: dict = {}
    if a.until_ci is not None:
        out["until_ci"] = stats.UNTIL_CI_PCT if a.until_ci is UNTIL_CI_DEFAULT else a.until_ci
    if a.max_rounds is not None:
        out["max_rounds"] = a.max_rounds
    return out


def _until_ci_args(s, what: str, *aliases: str) -> None:
    """--until-ci [PCT] and --max-rounds N (boot-timing, footprint-report)."""
    s.add_argument(
        "--until-ci",
        nargs="?",
        const=UNTIL_CI_DEFAULT,
        type=_number(0, 100),
        metavar="PCT",
        help=f"add rounds (at least the rounds asked and 3) until the 95%% interval of every headline "
        f"difference ({what}) is within ±PCT%% of the first kernel's median (default width 5), at most "
        "--max-rounds; the record's 'stopped' says why the rounds stopped (docs/report.md)",
    )
    s.add_argument(
        "--max-rounds",
        *aliases,
        dest="max_rounds",
        type=_count(1, 1000),
        default=None,
        metavar="N",
        help="at most N rounds with --until-ci (default 20)",
    )
    s.add_argument("--ci-pct-alone", default=None, help=argparse.SUPPRESS)  # make's CI_PCT= without UNTIL_CI=


def _boot_args(s) -> None:
    """Options of the boot-timing step (boot-timing, study)."""
    s.add_argument(
        "--runs",
        "-n",
        type=_count(1, 1000),
        default=None,
        help="boots per kernel (default: 1 on the instruction clock, 5 on the host clock)",
    )
    _clock_arg(s)
    s.add_argument("--path", choices=("direct", "u-boot"), help="boot path (default: the board's 'boot')")
    s.add_argument(
        "--root",
        choices=("ramdisk", "nfs"),
        default="ramdisk",
        help="root filesystem: the ramdisk (default), or the same files over NFS with the "
        "kernel's nfsroot, served by NFS-Ganesha for each run (board file [nfs]); "
        "results go to boot-timing-nfs.json",
    )


def _clock_arg(s) -> None:
    """--clock (make's CLOCK=): what measures time, instead of the board's qemu.clock."""
    s.add_argument(
        "--clock",
        choices=("host", "instructions"),
        default=None,
        help="what measures time (default: the board's qemu.clock): instructions (QEMU icount, deterministic: "
        "one boot per kernel, differences judged against the A/A floor) or host (rounds and tests); "
        "docs/clock.md",
    )


def _places_arg(s) -> None:
    """--places (make's PLACES=): the labgrid places a step's boots go to."""
    s.add_argument(
        "--places",
        type=_names,
        metavar="A,B",
        help="labgrid places to use instead of the board file's place/places (make PLACES=a,b); with "
        "several, boot-timing spreads whole rounds over them in parallel, one worker per place "
        "(docs/labgrid.md)",
    )


def _jobs_arg(s) -> None:
    """--jobs (make's JOBS=): local parallel boots of a measuring step (the round engine)."""
    s.add_argument(
        "--jobs",
        "-j",
        type=_count(1, 1024),
        default=None,
        metavar="N",
        help="on a board that is not a labgrid board (QEMU, a bench board): up to N boots at once, each "
        "worker with targets of its own (default: one per CPU on the instruction clock, 1 on the host "
        "clock); on the host clock turns the host-load guard off unless "
        "BRINGUP_HOST_GUARD=1 asks for it, which is refused with N above 1",
    )


def _lmbench_args(s) -> None:
    """Options of the footprint step (footprint-report, study)."""
    s.add_argument(
        "--lmbench",
        choices=("quick", "full", "none"),
        default="quick",
        help="quick: the seed's set with lmbench's speed knobs (about a minute per kernel "
        "under emulation); full: lmbench's defaults; none: footprint only",
    )
    s.add_argument(
        "--lmbench-source",
        metavar="TREE|TARBALL|URL",
        help="build lmbench 3.0-a9 from this source (static, with the board's cross compiler) "
        "instead of using Debian's binaries; the route for 32-bit PowerPC",
    )
    s.add_argument("--lmbench-sha256", metavar="HEX", help="sha256 of the source tarball (required for a URL)")
    s.add_argument(
        "--lmbench-runs",
        type=_count(1, 100),
        default=None,
        metavar="N",
        help="N rounds: each round boots every kernel once (order A B, B A, ...) and measures free, "
        "mem_eat and one lmbench pass; the report tests differences across the boots (default: 1 on the "
        "instruction clock, 5 on the host clock)",
    )


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`bringup: error: argument --runs: ...`), before any work."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"bringup: error: {message} (see {self.prog} --help)\n")


def _names(s: str) -> str:
    """An argparse type: A,B with at least one name (',,' or '' is a mistake, not the default)."""
    if not any(n.strip() for n in s.split(",")):
        raise argparse.ArgumentTypeError(f"{paths.show(s, 40)} names nothing (give A,B)")
    return s


def _count(lo: int, hi: int):
    """An argparse type: a whole number in lo..hi."""

    def check(s: str) -> int:
        if len(s.strip().lstrip("+-")) > 30 and s.strip().lstrip("+-").isdigit():  # int() refuses thousands
            raise argparse.ArgumentTypeError(f"{paths.show(s, 40)} ({len(s.strip())} digits) is outside {lo}..{hi}")
        if not re.fullmatch(r"[+-]?[0-9]+", s):  # int() also takes ' 5', '1_000' and other scripts' digits
            raise argparse.ArgumentTypeError(f"{paths.show(s, 60)} is not a whole number (digits 0-9 only)")
        v = int(s)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v} is outside {lo}..{hi}")
        return v

    check.__name__ = "count"
    return check


def _number(lo: float, hi: float):
    """An argparse type: a finite number with lo < value <= hi."""

    def check(s: str) -> float:
        if not s.isascii() or "_" in s or s != s.strip():  # float() also takes '1_0', ' 5' and other scripts' digits
            raise argparse.ArgumentTypeError(f"{paths.show(s, 60)} is not a number (digits 0-9, '.', 'e')")
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{paths.show(s, 60)} is not a number") from None
        if not math.isfinite(v) or not lo < v <= hi:
            raise argparse.ArgumentTypeError(f"{s if len(s) <= 40 else paths.show(s, 40)} is outside ({lo} .. {hi}]")
        return v

    check.__name__ = "number"
    return check


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="bringup",
        description="Build, boot and measure Linux kernels for board bring-up. "
        "Boards are boards/<name>.toml; results go to logs/<board>/<kernel>/.",
    )
    p.add_argument("--version", action="version", version=f"bringup {__version__}")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="a measuring step (boot-timing, footprint-report, workloads, study) refuses at once, naming the "
        "holder, when another run measures the board, instead of waiting for it (make NO_WAIT=1); one "
        "measurement of a board at a time (docs/records.md)",
    )
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", required=True, parser_class=Parser)

    s = sub.add_parser("boards", help="list the boards under boards/")
    s.set_defaults(fn=cmd_boards)

    s = sub.add_parser("show", help="show one board and its kernels")
    s.add_argument("board")
    s.set_defaults(fn=cmd_show)

    s = sub.add_parser(
        "build-all",
        help="fetch sources and build every kernel of a board",
        description="Fetch sources and build every kernel listed for the board. "
        "A kernel whose source, config and toolchain are unchanged is "
        "not rebuilt. Writes logs/<board>/<kernel>/build.json.",
    )
    s.add_argument("--board", "-b", required=True)
    s.add_argument("--kernel", "-k", action="append", help="only this kernel id (repeatable)")
    s.add_argument("--force", action="store_true", help="rebuild even when up to date")
    s.add_argument("-j", "--jobs", type=_count(1, 1024), default=None, help="make -j (default: number of CPUs)")
    s.add_argument(
        "--cross-compile",
        metavar="PREFIX",
        help="use this CROSS_COMPILE prefix for every kernel of the board, e.g. an external "
        "gcc 3/4-era toolchain: /opt/eldk/usr/bin/ppc_8xx-",
    )
    s.set_defaults(fn=cmd_build_all)

    s = sub.add_parser("build-report", help="print the build results table (seed 002 style)")
    s.add_argument("--board", "-b", required=True)
    s.add_argument("--format", choices=("text", "csv", "json"), default="text")
    s.set_defaults(fn=cmd_build_report)

    s = sub.add_parser(
        "build-cost",
        help="the cold build cost of every kernel: make of the image without ccache, in interleaved rounds",
        description="Build every kernel of the board again, only to time it: a scratch build directory, the "
        "same config and -j as the study's build, no ccache; rounds interleaved across the kernels; CPU time "
        "(user+sys of make's process tree) and wall time. The study's builds and records are not touched. "
        "Writes logs/<board>/build-cost.json (reused while the builds are the same; --force measures again) "
        "and prints each kernel against the first: the % change of CPU and wall time with its 95%% interval "
        "(paired t-test of the per-round log ratios, Benjamini-Hochberg). docs/building.md.",
    )
    s.add_argument("--board", "-b", required=True)
    s.add_argument(
        "--runs", type=_count(1, 100), default=None, metavar="N", help="rounds: cold builds of each kernel (default 3)"
    )
    _until_ci_args(s, "the CPU time of each kernel against the first")
    s.add_argument("-j", "--jobs", type=_count(1, 1024), default=None, help="make -j (default: the study build's)")
    s.add_argument("--force", action="store_true", help="measure again even when up to date")
    s.add_argument(
        "--aa",
        action="store_true",
        help="the A/A check: --kernel (default the board's last) as two arms a and b (board <board>-aa); "
        "exits 1 when a difference is claimed",
    )
    s.add_argument("--kernel", "-k", help="with --aa: the kernel id")
    s.add_argument(
        "--parallel",
        type=_count(1, 64),
        default=1,
        metavar="N",
        help="N builds at once, in round order (default 1): on a host shared with other work the "
        "measurement gets N shares of it; CPU time stays each build's own, wall time is shared; "
        "the host-load guard is then off",
    )
    s.set_defaults(fn=cmd_build_cost)

    s = sub.add_parser(
        "boot-timing",
        help="boot each kernel RUNS times and time the console milestones",
        description="Boot every kernel of the board over its serial console (QEMU or a "
        "real board), interleaved across kernels, and time the milestones "
        "of configs/milestones.toml. Writes logs/<board>/<kernel>/boot/<run>/ "
        "and logs/<board>/boot-timing.json.",
    )
    s.add_argument("--board", "-b", required=True)
    s.add_argument("--kernel", "-k", action="append", help="only this kernel id (repeatable)")
    _boot_args(s)
    _until_ci_args(s, "the boot milestones the summary states", "--max-runs")
    _places_arg(s)
    _jobs_arg(s)
    s.add_argument(
        "--profile",
        default="timing",
        metavar="NAME",
        help="boot profile, configs/profiles/NAME.toml: timing (default; the board's command line), initcalls "
        "(initcall_debug: each run's initcalls go into boot-timing-initcalls.json), quiet (a silent console)",
    )
    s.add_argument(
        "--timeout-factor", type=_number(0, 100), default=1.0, help="scale every milestone timeout (0 .. 100]"
    )
    s.set_defaults(fn=cmd_boot_timing)

    s = sub.add_parser(
        "footprint-report",
        help="boot the ramdisk: kernel code+data, free memory, memory for malloc(), lmbench",
        description="Boot each kernel with a ramdisk holding mem_eat and lmbench, and "
        "report seed 002's footprint table and the lmbench tables. Writes "
        "logs/<board>/<kernel>/footprint.json and lmbench.json.",
    )
    s.add_argument("--board", "-b", required=True)
    s.add_argument("--kernel", "-k", action="append")
    _lmbench_args(s)
    _clock_arg(s)
    _until_ci_args(s, "memory available to malloc() and every lmbench metric")
    s.add_argument("--timeout-factor", type=_number(0, 100), default=1.0, help="scale every timeout (0 .. 100]")
    _places_arg(s)
    _jobs_arg(s)
    s.set_defaults(fn=cmd_footprint)

    s = sub.add_parser(
        "workloads",
        help="boot a ramdisk with the application workloads of configs/workloads/ and run them in rounds",
        description="Put the Debian packages of the workloads (configs/workloads/<name>.toml, docs/workloads.md) "
        "and their libraries into a ramdisk, boot every kernel once per round (order A B, B A, ...) and run "
        "every workload in each boot. Writes logs/<board>/<kernel>/workloads.json.",
    )
    s.add_argument("--board", "-b", required=True)
    s.add_argument("--kernel", "-k", action="append")
    s.add_argument(
        "--workloads",
        "-w",
        type=_names,
        metavar="A,B",
        help="the workloads to run (default: the default set of configs/workloads/; all: every one)",
    )
    s.add_argument(
        "--runs",
        type=_count(1, 100),
        default=None,
        metavar="N",
        help="rounds: boots of each kernel (default: 1 on the instruction clock, 3 on the host clock)",
    )
    s.add_argument(
        "--mode", choices=("quick", "full"), default="quick", help="each workload's quick (default) or full size"
    )
    s.add_argument("--timeout-factor", type=_number(0, 100), default=1.0, help="scale every timeout (0 .. 100]")
    _until_ci_args(s, "every workload metric")
    _places_arg(s)
    _jobs_arg(s)
    _clock_arg(s)
    s.set_defaults(fn=cmd_workloads)

    s = sub.add_parser(
        "report",
        help="write the study as an HTML page and Markdown: tables, charts, summary",
        description="Write logs/<board>/report/index.html (self-contained: inline CSS and SVG "
        "charts) and report.md from the board's records: build table and sizes, "
        "symbol and .config diffs, boot timeline, footprint, lmbench and the bw_mem "
        "cascade, and a management summary that states only significant "
        "differences (docs/report.md). Prints the page's path.",
    )
    s.add_argument("--board", "-b", required=True)
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser(
        "study",
        help="the whole study: build-all, boot-timing, footprint-report, workloads, report",
        description="Run build-all, boot-timing, footprint-report, workloads and report for the board, "
        "in order, skipping a step whose records are up to date (same builds, "
        "ramdisk, boot path, runs, lmbench mode and workloads). Prints the report's path.",
    )
    s.add_argument("--board", "-b", required=True)
    _boot_args(s)
    _lmbench_args(s)
    _places_arg(s)
    s.add_argument(
        "--workloads",
        type=_names,
        metavar="A,B|none",
        help="the application workloads of the workloads step (default: the default set of configs/workloads/; "
        "all: every one; none: no step)",
    )
    s.add_argument(
        "--workload-runs",
        type=_count(1, 100),
        default=None,
        metavar="N",
        help="workload rounds (default: 1 on the instruction clock, 3 on the host clock)",
    )
    s.add_argument("--workload-mode", choices=("quick", "full"), default="quick", help="workload size (default quick)")
    s.add_argument("-j", "--jobs", type=_count(1, 1024), default=None)
    s.add_argument("--force", action="store_true", help="run every step again")
    s.add_argument(
        "--no-build-cost",
        dest="build_cost",
        action="store_false",
        help="leave out the cold build cost (make all BUILD_COST=0): every kernel built again without ccache, "
        "in rounds, only to be timed (bringup build-cost)",
    )
    s.add_argument(
        "--build-cost-runs",
        type=_count(1, 100),
        default=None,
        metavar="N",
        help="rounds of the cold build cost (default 3)",
    )
    s.set_defaults(fn=cmd_study)

    s = sub.add_parser(
        "aa",
        help="A/A check: one kernel as two arms through boot timing and footprint; the summary must claim nothing",
        description="Boot the same build of one kernel as two arms 'a' and 'b' (board <board>-aa; nothing is "
        "built) through boot timing and the footprint in rounds, and report what the management summary would "
        "claim (it must claim nothing) and the per-metric false-positive rate before and after the "
        "Benjamini-Hochberg correction. Writes logs/<board>-aa/aa.json; exits 1 when a difference is claimed.",
    )
    s.add_argument("--board", "-b", required=True)
    s.add_argument("--kernel", "-k", help="the kernel id (default: the board's last kernel)")
    _boot_args(s)
    s.add_argument("--lmbench", choices=("quick", "full", "none"), default="quick")
    s.add_argument(
        "--lmbench-runs",
        type=_count(1, 100),
        default=None,
        metavar="N",
        help="footprint rounds (default: 2 on the instruction clock, 5 on the host clock)",
    )
    s.add_argument(
        "--delay-ms",
        type=_count(0, 60000),
        default=0,
        metavar="MS",
        help="the sensitivity check (make ab): arm b's init waits MS ms before 'userspace up' "
        "(bringup.delay_ms= on its command line; arm a gets bringup.delay_ms=0); the summary must claim "
        "that difference, right sign and size, and nothing else",
    )
    s.set_defaults(fn=cmd_aa)

    s = sub.add_parser(
        "compare",
        help="compare two build records (deltas, symbol sizes, .config), or with --boot two kernels' boots",
        description="Compare two build records (two kernels, one kernel on two boards, or "
        "two runs on different days): the build table's deltas, a per-symbol "
        "size diff in the manner of bloat-o-meter, and a .config diff. A record "
        "is a build.json path, its directory, or <board>/<kernel> under logs/. "
        "With --boot, two kernels' boots from boot-timing records: each milestone's medians, shift "
        "with its 95 %% interval and Mann-Whitney over the boots (Benjamini-Hochberg), and the "
        "initcall attribution when both booted with initcall_debug; a side is <record>.json:<kernel> "
        "or <board>/<kernel> (its boot-timing-initcalls.json, else boot-timing.json).",
    )
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--boot", action="store_true", help="compare boots (boot-timing records), not builds")
    s.add_argument("--top", type=_count(1, 100000), default=20, help="symbols and config lines to show (default 20)")
    s.add_argument("--csv", metavar="FILE", help="also write the deltas as CSV")
    s.add_argument("--json", metavar="FILE", help="also write everything as JSON")
    s.set_defaults(fn=cmd_compare)

    s = sub.add_parser(
        "parse",
        help="parse a log made elsewhere and print JSON",
        description="parse bootlog FILE: kernel version, bootloader, Memory: and Freeing lines, "
        "milestones with their times and the first fault of any boot log (raw console, dmesg, "
        "syslog/journalctl, dmesg -T, grabserial/bringup stamps; mail-quoted, wrapped, CRLF, "
        "ANSI: the format assumed is in the output). "
        "parse lmbench FILE: the values (with units and the better direction) of lmbench "
        "1.x-3.x summary tables, results files, raw tool output or the footprint runner's "
        "blocks, in lmbench.json's structure. "
        "parse initcalls FILE: the initcall_debug lines of any era (2.6.0's 'Calling initcall 0x...', 2.6.25's "
        "'ran for N msecs', today's 'calling fn @ pid' / 'returned N after N usecs'): per initcall the function, "
        "module, duration, start time and return value. See docs/formats.md.",
    )
    s.add_argument("what", choices=("bootlog", "lmbench", "initcalls"))
    s.add_argument("file", help="the log file, or - for standard input")
    s.add_argument("--board", "-b", help="use this board's milestone overrides")
    s.add_argument(
        "--json",
        action="store_true",
        help="print JSON (bootlog and lmbench always do; initcalls prints a table without it)",
    )
    s.add_argument(
        "--map",
        metavar="SYSTEM_MAP",
        help="initcalls: the kernel's System.map, to name initcalls printed as addresses (no CONFIG_KALLSYMS) "
        "and give each its level (early, core, ..., late)",
    )
    s.add_argument(
        "--top", type=_count(1, 100000), default=20, help="initcalls: the slowest N in the table (default 20)"
    )
    s.set_defaults(fn=cmd_parse)

    s = sub.add_parser(
        "import",
        help="import a boot log or an lmbench result made elsewhere as a pseudo-kernel of a board",
        description="Store the values of a boot log (milestones with their times, the Memory: line) or of "
        "an lmbench summary, results file or raw output as the records of a pseudo-kernel KERNEL of "
        "BOARD (logs/BOARD/KERNEL/), marked imported with the file's sha256, so that `make report` "
        "shows it beside the live kernels (never tested). Formats: docs/formats.md; see docs/import.md.",
    )
    s.add_argument("what", choices=("bootlog", "lmbench"))
    s.add_argument("file", help="the boot log or lmbench file")
    s.add_argument("--board", "-b", required=True, help="the board whose report shows it")
    s.add_argument("--kernel", "-k", required=True, help="the pseudo-kernel's id (not a kernel of the board)")
    s.add_argument("--label", help="a note kept with the records and shown in the report")
    s.add_argument("--host", help="lmbench: the host (or 'host OS') of a summary with several")
    s.add_argument("--root", choices=("ramdisk", "nfs"), help="bootlog: the boot table it joins (default ramdisk)")
    s.add_argument("--replace", action="store_true", help="overwrite earlier records of KERNEL")
    s.set_defaults(fn=cmd_import)

    s = sub.add_parser(
        "validate",
        help="check data files (boards, configs) and records without doing any work",
        description="Check each FILE as the step that reads it would: a board file (any .toml elsewhere), "
        "configs/arch/*.toml, configs/era/*.toml, configs/milestones.toml, configs/lmbench.toml, "
        "configs/profiles/*.toml, configs/workloads/*.toml, or a record (*.json). The first fault ends "
        "it in one line naming the file, the field and the value (docs/errors.md).",
    )
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--kind", choices=VALIDATE_KINDS, help="what the files are (default: from where they are)")
    s.set_defaults(fn=cmd_validate)

    s = sub.add_parser(
        "doc",
        help="print generated documentation (board-files: docs/board-files.md; board-schema: "
        "docs/board-schema.json, the JSON Schema of a board file; errors: docs/errors.md)",
    )
    s.add_argument("what", choices=("board-files", "board-schema", "errors"))
    s.set_defaults(fn=cmd_doc)
    return p


class _Guarded:
    """A stream (stdout, stderr) that remembers the error its last write or
    flush raised, so that main() can tell output errors from other ones."""

    def __init__(self, stream):
        self._stream = stream
        self.error: OSError | None = None

    def write(self, s):
        try:
            return self._stream.write(s)
        except OSError as e:
            self.error = e
            raise

    def flush(self):
        try:
            self._stream.flush()
        except OSError as e:
            self.error = e
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


# the variables through which a make hands its command line to the makes it starts: bringup
# runs from `make all BOARD=.. KERNEL=..` and starts Kbuild, lmbench's and busybox's makes,
# which must see their own arguments only (Kbuild would read a KERNEL= or CROSS_COMPILE= as an
# override, and a jobserver's descriptors are not ours)
MAKE_HANDOVER = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKEFILES")


def _no_empty_file_names(a: argparse.Namespace) -> None:
    """An empty FILE (make import FILE= with an empty value, '' in a script) would be read as
    the current directory ('.'): refused, naming the argument."""
    for key, what in (("file", "FILE"), ("files", "FILE"), ("map", "--map")):
        v = getattr(a, key, None)
        if v == "" or (isinstance(v, list) and "" in v):
            raise BringupError(f"{what} '': an empty file name; name the file to read")


def _no_max_rounds_alone(a: argparse.Namespace) -> None:
    """--max-rounds (MAX_ROUNDS=) bounds the rounds --until-ci adds; without it, it was silently
    ignored (the rounds asked ran): refused, as LMBENCH_SHA256= without LMBENCH_SRC= is."""
    alone = getattr(a, "ci_pct_alone", None)
    if alone is not None:
        raise BringupError(
            f"CI_PCT={paths.show(alone, 40)} without UNTIL_CI=1: the width is for the rounds UNTIL_CI=1 adds "
            "(it was ignored); give UNTIL_CI=1 CI_PCT=<pct>"
        )
    if getattr(a, "max_rounds", None) is not None and getattr(a, "until_ci", None) is None:
        raise BringupError(
            f"--max-rounds {a.max_rounds} (MAX_ROUNDS=) without --until-ci (UNTIL_CI=1): it bounds only the "
            "rounds --until-ci adds; give --runs (RUNS=) for a fixed number"
        )


# on/off options as make passes them, with the variable's value (FORCE=0 must not force):
# --force=1 is --force, --force=0 is left out, any other value refused; --until-ci-if=0 also
# drops the --until-ci that UNTIL_CI= brings (Makefile, UNTIL); --build-cost-if=0 is --no-build-cost
SWITCHES = {
    "--force": "FORCE",
    "--replace": "REPLACE",
    "--until-ci-if": "UNTIL_CI",
    "--no-wait": "NO_WAIT",
    "--build-cost-if": "BUILD_COST",
}


def _environment_values() -> None:
    """Environment variables that carry values into files bringup writes, checked before any work."""
    from bringup.util import aptprivate

    for var in aptprivate.MIRROR_VARS:
        aptprivate.mirror_from_env(var)
    for var in ENV_SWITCHES:
        env_switch(var)
    from bringup.builder import sources

    sources.check_download_dirs()


def _switches(argv: list[str]) -> list[str]:
    out: list[str] = []
    drop_until = False
    for i, t in enumerate(argv):
        if t == "--":
            out += argv[i:]
            break
        opt, eq, v = t.partition("=")
        if not eq or opt not in SWITCHES:
            out.append(t)
            continue
        if v.strip().lower() not in YES + NO:
            raise BringupError(
                f"{SWITCHES[opt]}={paths.show(v, 40)} ({opt}): give 1 to turn it on, or 0 (or leave it out) for off"
            )
        on = v.strip().lower() in YES
        if opt == "--until-ci-if":
            drop_until = drop_until or not on
        elif opt == "--build-cost-if":  # on by default: BUILD_COST=0 leaves it out
            if not on:
                out.append("--no-build-cost")
        elif on:
            out.append(opt)
    if drop_until:
        out = [t for t in out if t != "--until-ci" and not t.startswith("--until-ci=")]
    return out


def _parse(argv: list[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status of --help, --version or a one-line usage error."""
    try:
        args = _switches(list(sys.argv[1:] if argv is None else argv))
    except BringupError as e:
        print(f"bringup: error: {one_line(str(e))}", file=sys.stderr)
        return e.exit_code
    if "--no-wait" in args[: args.index("--") if "--" in args else len(args)]:
        # anywhere before "--" (before or after the command): a measuring step refuses a busy board
        from bringup.util import lock

        os.environ[lock.NO_WAIT_ENV] = "1"
        args = [t for i, t in enumerate(args) if t != "--no-wait" or ("--" in args and i > args.index("--"))]
    try:
        return build_parser().parse_args(args)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2


def main(argv=None) -> int:
    for var in MAKE_HANDOVER:
        os.environ.pop(var, None)
    a = _parse(argv)
    if isinstance(a, int):
        return a
    out, err = _Guarded(sys.stdout), _Guarded(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        try:
            _no_empty_file_names(a)
            _no_max_rounds_alone(a)
            _environment_values()
            code = a.fn(a)
            out.flush()  # output errors surface here, not at interpreter exit
            return code
        except BringupError as e:
            print(f"bringup: error: {one_line(str(e))}", file=sys.stderr)
            return e.exit_code
        except ParseError as e:
            print(f"bringup: error: {one_line(str(e))}", file=sys.stderr)
            return BringupError.exit_code
        except KeyboardInterrupt:
            print("bringup: interrupted", file=sys.stderr)
            return 130
        except OSError as e:
            if e is out.error or e is err.error:
                raise
            # a file bringup could not read or write (disk full, permissions, ...): one line
            name = e.filename or _failed_file(e)
            where = f"{name}: " if name else ""
            print(f"bringup: error: {one_line(f'{where}{e.strerror or e}')}", file=sys.stderr)
            return 1
        except Exception as e:  # a bug: one line, the traceback on request
            if os.environ.get("BRINGUP_DEBUG"):
                raise
            print(
                f"bringup: internal error: {type(e).__name__}: {one_line(str(e))} (a bug in bringup; "
                "run again with BRINGUP_DEBUG=1 for the traceback)",
                file=sys.stderr,
            )
            return 70
    except OSError as e:
        if e is not out.error and e is not err.error:
            raise
        return _output_failed(e, out, err)
    finally:
        sys.stdout, sys.stderr = out._stream, err._stream


def _failed_file(e: OSError) -> str | None:
    """The file a write or read was on when e came without a file name (a full disk in
    Path.write_text(), in f.write()): the innermost frame's Path or open file, else None."""
    import io
    from pathlib import PurePath

    tb, frames = e.__traceback__, []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        here = list(frame.f_locals.values())
        files = [getattr(v, "name", None) for v in here if isinstance(v, io.IOBase)]
        files = [f for f in files if isinstance(f, str)]
        if files:  # an open file of the innermost frame that had one
            return str(files[0])
        me = frame.f_locals.get("self")
        if isinstance(me, PurePath):  # inside Path.write_text() and the like
            return str(me)
    return None


CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(msg: str) -> str:
    """An error message as one line of plain text: each control character (a newline, an ANSI
    escape from a file name or value) written as its escape, as repr() would (\\n, \\x1b)."""
    return CONTROL.sub(lambda m: repr(m.group(0))[1:-1], msg)


def _output_failed(e: OSError, out: _Guarded, err: _Guarded) -> int:
    """Standard output or error cannot be written.  A reader that went away
    (`bringup boards | head -1`) ends bringup quietly, with the status of a tool
    killed by SIGPIPE (128 + 13); any other failure is one line on stderr."""
    for g in (out, err):
        if g.error is not None:
            # nothing more reaches a stream that failed, not even at interpreter exit
            with contextlib.suppress(OSError, ValueError):  # no file descriptor (tests)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, g._stream.fileno())
                os.close(devnull)
    if isinstance(e, BrokenPipeError):
        return 128 + signal.SIGPIPE
    name = "standard output" if e is out.error else "standard error"
    with contextlib.suppress(OSError, ValueError):  # stderr is what failed: nobody to tell
        print(f"bringup: error: cannot write to {name}: {e.strerror or e}", file=err._stream, flush=True)
    return 1
