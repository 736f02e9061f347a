"""The handlers of the commands that list boards and build kernels: boards, show,
build-all, build-report, build-cost."""

from __future__ import annotations

import argparse
import json
import sys

from bringup.cli import common
from bringup.errors import BringupError
from bringup.util import paths


def cmd_boards(args: argparse.Namespace) -> int:
    from bringup.model.board import list_boards, load_board

    for name in list_boards():
        try:
            board = load_board(name)
            kernels = ", ".join(k.id for k in board.kernels)
            print(f"{name:20s} {board.arch.name:8s} {kernels:30s} {board.description}")
        except BringupError as e:
            print(f"{name:20s} (not loadable: {e})")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from bringup.model.board import load_board

    board = load_board(args.board)
    arch, image = board.arch, board.image
    print(f"{board.name}: {board.description}")
    print(f"  file: {paths.rel(board.file)}")
    print(f"  arch: {arch.name} (ARCH={arch.kernel_arch}), CROSS_COMPILE={board.cross_compile or '(host gcc)'}")
    print(
        f"  image: {image.target}{' + uImage' if image.uimage else ''}, boot: {board.boot}, "
        f"memory: {board.memory_mb} MB"
    )
    for kernel in board.kernels:
        source = kernel.source
        where = (
            f"debian {source.debian} ({source.suite})" if source.debian else source.url or source.tarball or source.path
        )
        print(
            f"  kernel {kernel.id}: era {kernel.era.name}, arch {kernel.arch.name}, "
            f"{kernel.defconfig or kernel.config_file} + {len(kernel.fragments)} fragment(s), source {where}"
        )
    return 0


def cmd_build_all(args: argparse.Namespace) -> int:
    from bringup.builder.kernel import build_all
    from bringup.model.board import load_board

    board = load_board(args.board)
    if args.cross_compile is not None:
        from bringup.model.values import prefix_problem

        why = prefix_problem(args.cross_compile)
        if why:
            raise BringupError(
                f"--cross-compile {paths.show(args.cross_compile)}: {why}; e.g. arm-linux-gnueabihf- or "
                "/opt/eldk/usr/bin/ppc_8xx-"
            )
        for kernel_id in args.kernel or []:
            board.kernel(kernel_id)  # an unknown --kernel: refused before the toolchain is looked at
        for kernel in board.kernels:
            kernel.cross_compile = args.cross_compile
    logs, cache = paths.logs_dir(), paths.cache_dir()
    build_all(board, logs, cache, only=args.kernel or None, force=args.force, jobs=args.jobs, say=common.say)
    return 0


def cmd_build_report(args: argparse.Namespace) -> int:
    from bringup.model.board import load_board
    from bringup.report import buildtable

    board = load_board(args.board)
    found, missing, left_out = buildtable.load_records(board, paths.logs_dir(), say=common.say)
    if args.format != "text":
        for why in left_out:
            common.say(f"bringup: left out {why}")
    if args.format == "csv":
        sys.stdout.write(buildtable.render_csv(found))
    elif args.format == "json":
        print(json.dumps(buildtable.table(found).as_dict(), indent=2))
    else:
        cost = buildtable.load_cost(board, paths.logs_dir(), found)
        sys.stdout.write(buildtable.render_text(found, board.name, missing, left_out, cost))
    return 0


def cmd_build_cost(args: argparse.Namespace) -> int:
    from bringup.measure import buildcost
    from bringup.model.board import load_board
    from bringup.report import buildcost as costreport

    board = load_board(args.board)
    study = None
    if args.aa:
        kernel = args.kernel or board.kernels[-1].id
        board.kernel(kernel)  # an unknown kernel fails here, before any work
        study, board = (board.name, kernel), buildcost.aa_board(board, kernel)
        common.say(f"A/A check of the build cost: {study[0]}/{kernel} as arms a and b (board {board.name})")
    elif args.kernel:
        raise BringupError(
            f"--kernel {paths.show(args.kernel, 40)}: only with --aa (the build cost compares every kernel)"
        )
    rounds = {} if args.max_rounds is not None else {"max_rounds": buildcost.DEFAULT_MAX_ROUNDS}
    record, f, _ = buildcost.measure(
        board,
        paths.logs_dir(),
        paths.cache_dir(),
        runs=args.runs if args.runs is not None else (buildcost.DEFAULT_ROUNDS),
        jobs=args.jobs,
        guard=common.host_guard(jobs=args.parallel),
        force=args.force,
        study=study,
        parallel=args.parallel,
        say=common.say,
        **common.until_ci(args) | rounds,
    )
    sys.stdout.write(costreport.render(record))
    print(f"record: {paths.rel(f)}")
    if args.aa:
        claimed = costreport.claims(record)
        if claimed:
            common.say(f"bringup: error: the build cost claims a difference between a kernel and itself: {claimed[0]}")
            return 1
        common.say("A/A check of the build cost: no difference claimed (as it must be)")
    return 0
