"""The handlers of the commands that read records and files: report, compare, parse,
import, validate, doc."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bringup.cli import common
from bringup.errors import BringupError
from bringup.util import paths

VALIDATE_KINDS = ("board", "arch", "era", "milestones", "lmbench", "clock", "profile", "workload", "record")


def cmd_report(args: argparse.Namespace) -> int:
    from bringup.model.board import load_board
    from bringup.report import page

    report = page.write(load_board(args.board), paths.logs_dir(), say=common.say)
    print(report.index.resolve())
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from bringup import records
    from bringup.report import compare

    for out in (args.csv, args.json):  # refused before any work
        if out:
            common.check_output_file(Path(out))
    logs = paths.logs_dir()
    how: Any = compare
    if args.boot:
        from bringup.report import bootcompare

        how = bootcompare
    sides = how.resolve(args.a, logs), how.resolve(args.b, logs)
    how.check_sets(*sides, say=common.say)  # refused when a record is not as its set wrote it
    result = how.compare(*sides)
    sys.stdout.write(how.render(result, args.top))
    for path, export in ((args.csv, how.to_csv), (args.json, how.to_json)):
        if path:
            records.write_text(path, export(result))
            common.say(f"wrote {path}")
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    if args.file != "-":
        common.check_input_file(Path(args.file))
    if args.map and args.what != "initcalls":
        raise BringupError("--map: only for 'parse initcalls'")
    if args.map:
        common.check_input_file(Path(args.map))
    name = "standard input" if args.file == "-" else args.file
    with contextlib.ExitStack() as stack:  # streamed: bounded memory for any size of input
        f = sys.stdin.buffer if args.file == "-" else stack.enter_context(open(args.file, "rb"))
        if args.what == "initcalls":
            result = _initcalls(f, name, args.map)
            if not args.json:
                sys.stdout.write(_initcall_table(result, args.top))
                return 0
        elif args.what == "bootlog":
            result = _bootlog(f, name, args.board)
        else:
            result = _lmbench(f, name)
    print(json.dumps(result, indent=2))
    return 0


def _initcalls(f, name: str, system_map: str | None) -> dict:
    from bringup.parse import initcalls

    result = initcalls.parse_initcalls(f, name)
    if system_map:
        symbols = initcalls.system_map(Path(system_map).read_text(errors="replace"))
        if not symbols[0] and not symbols[1]:
            raise BringupError(f"--map {system_map}: not a System.map (no '<address> <type> <symbol>' line)")
        result["unresolved"] = initcalls.resolve(result["initcalls"], symbols)
    return result


def _bootlog(f, name: str, board: str | None) -> dict:
    """A boot log's values, with the milestones of --board when given."""
    from bringup.model.milestones import load_rules
    from bringup.parse import bootlog

    rules = load_rules()
    if board:
        from bringup.model.board import load_board

        rules = load_rules(load_board(board).milestones)
    return bootlog.parse_bootlog(f, rules, name)


def _lmbench(f, name: str) -> dict:
    from bringup.model.benchset import labels, load_set
    from bringup.parse import lmbench

    result = lmbench.parse_lmbench(f, name, labels=labels())
    if result["format"] == "runner":  # the runner's blocks are bringup's benchmarks: their groups
        groups = {bench.name: bench.group for bench in load_set().bench}
        for run in result["results"]:
            for bench_name, bench in run["benchmarks"].items():
                bench["group"] = groups.get(bench_name, bench["group"])
    return result


def _initcall_table(result: dict, top: int) -> str:
    """`parse initcalls` without --json: the wording, the total and the slowest initcalls."""
    out = [
        f"{result['count']} initcalls ({result['timed']} with a duration), {result['total_us'] / 1000:.1f} ms in "
        f"all; wording: {result['format_words']}; text: {result['text']['assumed']}"
    ]
    if result["unfinished"]:
        out.append("still running where the log ends: " + ", ".join(u["fn"] for u in result["unfinished"][:10]))
    if result.get("problems"):
        out.append("left wrong: " + ", ".join(f"{p['symbol']} ({p['why']})" for p in result["problems"][:10]))
    timed = sorted((e for e in result["initcalls"] if e["us"] is not None), key=lambda e: -e["us"])[:top]
    if timed:
        out += ["", f"{'ms':>10}  {'start s':>10}  {'level':<8}  initcall"]
        for e in timed:
            start = "" if e["start_s"] is None else f"{e['start_s']:.6f}"
            module = f" [{e['module']}]" if e["module"] else ""
            returned = f" (returned {e['rc']})" if e["rc"] else ""
            out.append(f"{e['us'] / 1000:>10.3f}  {start:>10}  {e['level'] or '':<8}  {e['fn']}{module}{returned}")
    return "\n".join(out) + "\n"


def cmd_import(args: argparse.Namespace) -> int:
    from bringup import importer
    from bringup.model.board import load_board

    board = load_board(args.board)
    importer.check_kernel_id(board, args.kernel, args.replace)  # before the file is read
    importer.check_label(args.label)
    if args.what == "lmbench" and args.root is not None:
        raise BringupError("--root: only for a boot log (the boot table it joins)")
    if args.what == "bootlog" and args.host is not None:
        raise BringupError("--host: only for an lmbench summary (the host column to import)")
    logs, f, kernel = paths.logs_dir(), Path(args.file), args.kernel
    if args.what == "bootlog":
        root = args.root or "ramdisk"
        result = importer.import_bootlog(board, logs, f, kernel, args.label, args.replace, root, say=common.say)
    else:
        result = importer.import_lmbench(board, logs, f, kernel, args.label, args.host, args.replace, say=common.say)
    common.say(
        f"import: {board.name}/{kernel} from {args.file} ({result['format']}); make report BOARD={board.name} shows it"
    )
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Check data files and records as the steps that read them would, without doing any work."""
    for name in args.files:
        f = Path(name)
        kind = args.kind or _kind_of(f)
        common.check_input_file(f)
        _loader(kind)(f, name)
        print(f"{name}: a valid {kind} file" if kind != "record" else f"{name}: a valid record")
    return 0


def _kind_of(f: Path) -> str:
    """What a data file is, from where it lives: configs/<kind>/, configs/milestones.toml,
    configs/lmbench.toml, configs/clock.toml, a .json record; any other .toml is a board file."""
    if f.suffix == ".json":
        return "record"
    if f.name in ("milestones.toml", "lmbench.toml", "clock.toml"):
        return f.stem
    folder = f.absolute().parent.name
    return {"arch": "arch", "era": "era", "profiles": "profile", "workloads": "workload"}.get(folder, "board")


def _loader(kind: str) -> Callable[[Path, str], object]:
    """How `validate` reads a file of this kind (VALIDATE_KINDS): as the step that reads it would."""
    from bringup.model import benchset, board, clocks, milestones, profiles, workload

    return {
        "board": lambda f, name: board.load_board(str(f) if "/" in name or name.endswith(".toml") else f"./{name}"),
        "arch": lambda f, name: board.load_arch(f.stem, f.absolute().parent.parent, file=f),
        "era": lambda f, name: board.load_era(f.stem, f.absolute().parent.parent, file=f),
        "milestones": lambda f, name: milestones.load_rules(file=f),
        "lmbench": lambda f, name: benchset.load_set(f),
        "clock": lambda f, name: clocks.load_floors(f),
        "profile": lambda f, name: profiles.load_profile_file(f),
        "workload": lambda f, name: workload.load(f),
        "record": lambda f, name: _read_record(f),
    }[kind]


def _read_record(f: Path) -> None:
    """A record, checked as its kind (its schema field); a record of no known kind is checked as a
    build record, whose checks name what is wrong with the schema field."""
    from bringup import records

    data = records.load(f)
    schema = data.get("schema") if isinstance(data, dict) else None
    kind = schema.partition("/")[0] if isinstance(schema, str) else ""
    records.read(f, kind if kind in records.KINDS else "bringup.build")


def cmd_doc(args: argparse.Namespace) -> int:
    from bringup.model.boarddoc import board_schema_json, reference_markdown

    if args.what == "errors":
        from bringup.util import errdoc

        sys.stdout.write(errdoc.markdown())
    else:
        sys.stdout.write(reference_markdown() if args.what == "board-files" else board_schema_json())
    return 0
