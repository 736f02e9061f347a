"""The handlers of the commands that boot and measure: boot-timing, footprint-report,
workloads, study, aa."""

from __future__ import annotations

import argparse
import sys

from bringup.cli import common
from bringup.errors import BringupError
from bringup.util import paths


def cmd_boot_timing(args: argparse.Namespace) -> int:
    from bringup import records, study, targets
    from bringup.boot import rounds
    from bringup.boot import timing as boottiming
    from bringup.model.clocks import for_root
    from bringup.model.milestones import load_rules
    from bringup.model.profiles import load_profile
    from bringup.util import lock

    asked = common.board(args)
    board = for_root(asked, args.root)  # an NFS root on the host clock (said once the request is checked)
    jobs = common.boot_jobs(board, args.jobs)
    profile = load_profile(args.profile)
    places = targets.places(board, targets.parse_places(args.places), say=common.say)
    guard = common.host_guard(board, jobs)
    rounds.check(places, jobs, guard)  # --jobs that cannot work: refused before any work
    logs = paths.logs_dir()
    boottiming.plan(board, logs, args.path or board.boot, args.root, args.kernel or None)  # before the ramdisk
    if board is not asked:
        for_root(asked, args.root, common.say)
    boots = study.Boots(
        common.runs(board, args.runs, "boot"),
        args.path,
        args.root,
        guard,
        jobs,
        places,
        profile=profile,
        only=args.kernel or None,
        **common.until_ci(args),
        timeout_factor=args.timeout_factor,
    )
    with lock.board(logs / board.name, "boot-timing", say=common.say):  # the ramdisk too: one run at a time
        summary = study.boot_on_ramdisk(board, logs, paths.cache_dir(), boots, common.say)
    table = summary.model_dump(mode="json", by_alias=True)  # the record as written
    sys.stdout.write(boottiming.render_table(table, load_rules(board.milestones)))
    failed = sum(k.failed for k in summary.kernels.values())
    name = records.boot_timing_name(args.root, failed=failed > 0, profile=profile.name)
    common.say(f"summary: {paths.rel(logs / board.name / name)}")
    if failed:
        common.say(f"bringup: error: {failed} boot run(s) failed (see above); earlier boot-timing.json kept")
        return 4
    return 0


def cmd_footprint(args: argparse.Namespace) -> int:
    from bringup import targets
    from bringup.builder.lmbench import parse_spec
    from bringup.measure import footprint

    board = common.board(args)
    jobs = common.boot_jobs(board, args.jobs)
    places = targets.parse_places(args.places)
    targets.places(board, places)  # PLACES on a board that is not in a lab: refused before any work
    spec = parse_spec(args.lmbench_source, args.lmbench_sha256)
    result = footprint.footprint(
        board,
        paths.logs_dir(),
        paths.cache_dir(),
        only=args.kernel or None,
        mode=args.lmbench,
        timeout_factor=args.timeout_factor,
        lmbench_source=spec,
        lmbench_runs=common.runs(board, args.lmbench_runs, "lmbench"),
        say=common.say,
        guard=common.host_guard(board, jobs),
        places=places,
        **common.until_ci(args),
        jobs=jobs,
    )
    sys.stdout.write(footprint.render_footprint(board.name, result))
    sys.stdout.write(footprint.render_lmbench(result))
    return 0


def cmd_workloads(args: argparse.Namespace) -> int:
    from bringup import targets
    from bringup.measure import workloads, workloadtable

    board = common.board(args)
    jobs = common.boot_jobs(board, args.jobs)
    names = common.workload_names(args.workloads)
    if names == []:
        raise BringupError("--workloads none: name the workloads to run, all, or leave it out for the default set")
    result = workloads.workloads(
        board,
        paths.logs_dir(),
        paths.cache_dir(),
        only=args.kernel or None,
        names=names,
        mode=args.mode,
        runs=common.runs(board, args.runs, "workload"),
        timeout_factor=args.timeout_factor,
        guard=common.host_guard(board, jobs),
        say=common.say,
        places=targets.parse_places(args.places),
        **common.until_ci(args),
        jobs=jobs,
    )
    sys.stdout.write(workloadtable.render(result))
    return 0


def cmd_study(args: argparse.Namespace) -> int:
    from bringup import study, targets
    from bringup.builder.lmbench import parse_spec

    board = common.board(args)
    places = targets.parse_places(args.places)
    targets.places(board, places)  # PLACES on a board that is not in a lab: refused before any work
    plan = study.StudyPlan(
        runs=common.runs(board, args.runs, "boot"),
        path=args.path,
        root=args.root,
        lmbench=args.lmbench,
        lmbench_source=parse_spec(args.lmbench_source, args.lmbench_sha256),
        lmbench_runs=common.runs(board, args.lmbench_runs, "lmbench"),
        jobs=args.jobs,
        # the measuring steps' boots at once: JOBS (else one per CPU) on the instruction clock; one on the host
        # clock, whose runs would disturb each other (JOBS is then the builds' make -j only)
        boot_jobs=common.boot_jobs(board, args.jobs) if common.deterministic(board) else 1,
        force=args.force,
        guard=common.host_guard(board),
        places=places,
        workloads=common.workload_names(args.workloads),
        workload_runs=common.runs(board, args.workload_runs, "workload"),
        workload_mode=args.workload_mode,
        build_cost=args.build_cost,
        **({"build_cost_runs": args.build_cost_runs} if args.build_cost_runs is not None else {}),
    )
    report = study.run(board, paths.logs_dir(), paths.cache_dir(), plan, say=common.say)
    common.say("\n" + report.summary())
    common.say(f"\nThe study of {board.name} is done. Open the report:\n  {report.index.resolve()}")
    print(report.index.resolve())
    return 0


def cmd_aa(args: argparse.Namespace) -> int:
    from bringup import aa

    board = common.board(args)
    kernel = args.kernel or board.kernels[-1].id
    board.kernel(kernel)  # an unknown kernel fails here, before any work
    # an A/A or A/B check needs two boots per arm at least, to see the spread within an arm too
    runs = args.runs if args.runs is not None else max(2, common.runs(board, None, "boot"))
    lmbench_runs = args.lmbench_runs if args.lmbench_runs is not None else max(2, common.runs(board, None, "lmbench"))
    plan = aa.CheckPlan(
        runs=runs,
        root=args.root,
        path=args.path,
        lmbench=args.lmbench,
        lmbench_runs=lmbench_runs,
        guard=common.host_guard(board),
        jobs=common.boot_jobs(board, None),  # boots at once: one per CPU on the instruction clock, one on the host's
        delay_ms=args.delay_ms,
    )
    result = aa.run(board, kernel, paths.logs_dir(), paths.cache_dir(), plan, say=common.say)
    sys.stdout.write(aa.render(result))
    if args.delay_ms and not result["sensitivity"]["passed"]:
        common.say("bringup: error: the sensitivity check failed: the summary did not claim the known cost alone")
        return 1
    if not args.delay_ms and result["claims"]:
        claims = len(result["claims"])
        common.say(f"bringup: error: the summary claims {claims} difference(s) between a kernel and itself")
        return 1
    return 0
