"""`bringup import`: a boot log or an lmbench result made elsewhere, stored as the
records of a pseudo-kernel beside a board's live kernels (docs/import.md).

    import_bootlog(board, logs, FILE, "2.4-2005")   -> logs/<board>/2.4-2005/boot-timing.json,
                                                       footprint.json, imported-bootlog/console.log
    import_lmbench(board, logs, FILE, "2.4-2005")   -> logs/<board>/2.4-2005/lmbench.json,
                                                       imported-lmbench/lmbench.txt

The records are those a live run writes (same kinds, same metric names, units and
better directions), each with `imported` provenance (the source file, its sha256,
the format the parser detected, the label, the time), and a verbatim copy of the
file next to them, so that the report links every value to its line.

Everything is checked before anything is written: the kernel id, the file, that
it parses and holds something to import, that no record would be overwritten
(unless replace), and every record through its model.  A failure is one line
(BringupError) and leaves logs/ as it was.
"""

from __future__ import annotations

import hashlib
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bringup import records, stats
from bringup.errors import BringupError
from bringup.model import benchset
from bringup.model.base import CONTROL, regular_file
from bringup.model.board import Board
from bringup.model.milestones import load_rules
from bringup.model.values import BOARD_FILE_SUFFIXES, RESERVED_IDS
from bringup.parse import bootlog as bootlog_parser
from bringup.parse import lmbench as lmbench_parser
from bringup.parse import meminfo
from bringup.parse.errors import ParseError
from bringup.records import BootTiming, Footprint, Lmbench
from bringup.records.imported import Imported
from bringup.util import clock, paths

KERNEL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
RUN_DIRS = {"bootlog": "imported-bootlog", "lmbench": "imported-lmbench"}
COPIES = {"bootlog": "console.log", "lmbench": "lmbench.txt"}  # the names a live run's links use
RUN_ID = "imported"
UNITS = {"us": ("us", 1.0), "ns": ("ns", 1.0), "MB/s": ("MB/s", 1.0), "s": ("s", 1.0), "ms": ("us", 1000.0)}

Say = Callable[[str], None]


def check_kernel_id(board: Board, kernel: str, replace: bool = False) -> None:
    """A pseudo-kernel id: a plain name (letters, digits, . _ + -), not a directory
    logs/<board>/ has for something else, not a kernel of the board unless replace."""
    if not kernel:
        raise BringupError("--kernel: empty; give the imported kernel an id, e.g. --kernel 2.4.20-2005")
    if not KERNEL_ID_RE.match(kernel) or kernel in (".", ".."):
        raise BringupError(
            f"--kernel {kernel!r}: not a kernel id (1-64 letters, digits, '.', '_', '+', '-'; "
            "no path separators, spaces or shell characters)"
        )
    if kernel in RESERVED_IDS:
        raise BringupError(f"--kernel {kernel!r}: logs/{board.name}/{kernel}/ is not a kernel's directory")
    if kernel.endswith(BOARD_FILE_SUFFIXES):
        raise BringupError(
            f"--kernel {kernel!r}: ends in {kernel[kernel.rindex('.') :]!r}, like the files logs/{board.name}/ holds "
            "(boot-timing.json); a kernel's directory would take its name"
        )
    if not replace and kernel in {k.id for k in board.kernels}:
        raise BringupError(
            f"--kernel {kernel!r}: a kernel of board {board.name} (boards/{board.name}.toml); choose another id, "
            "or --replace to put the imported records in place of its own"
        )


MAX_LABEL = 200


def check_label(label: str | None) -> None:
    """--label: one line of text of sane length (it goes into the report's tables)."""
    if label is None:
        return
    if CONTROL.search(label):  # C0, C1 and the bidi overrides that reorder what the report shows
        raise BringupError(f"--label {paths.show(label, 80)}: contains a control character (a newline, an escape)")
    if len(label) > MAX_LABEL:
        raise BringupError(f"--label {paths.show(label, 40)}: {len(label)} characters; at most {MAX_LABEL}")
    if not label.strip():
        raise BringupError("--label: blank; leave it out, or give a note to show in the report")


MAX_IMPORT = 256 * 1024 * 1024  # a boot log or an lmbench result larger than this is not one


def _source(file: Path) -> tuple[Path, str, int]:
    """The file's absolute path, sha256 and size; one line when it cannot be read."""
    st = regular_file(file, "file to import")
    if st.st_size > MAX_IMPORT:  # refused before it is read (hashed) to the end
        raise BringupError(
            f"{file}: {st.st_size} bytes: too large for a boot log or lmbench result (at most {MAX_IMPORT})"
        )
    h = hashlib.sha256()
    size = 0
    with open(file, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return file.resolve(), h.hexdigest(), size


def _free(targets: list[Path], replace: bool) -> None:
    for t in targets:
        if t.exists() and not replace:
            raise BringupError(f"{paths.rel(t)}: exists (an earlier import or run); --replace to overwrite it")


def _provenance(kind: str, src: Path, sha: str, size: int, fmt: str, assumed: str, label: str | None) -> Imported:
    return Imported(
        kind=kind,
        source=str(src),
        sha256=sha,
        bytes=size,
        format=fmt,
        assumed=assumed,
        label=label,
        at=clock.now(),
        kept=COPIES[kind],
    )


def _write(kdir: Path, kind: str, src: Path, recs: list[tuple[str, records.Record]]) -> list[Path]:
    """The verbatim copy, then the records (each written atomically)."""
    run = kdir / RUN_DIRS[kind]
    copy = run / COPIES[kind]
    records.write_text(copy, "")  # the directory, and a check that it is writable
    tmp = copy.with_name(f".{copy.name}.import")
    with open(src, "rb") as fi, open(tmp, "wb") as fo:
        while chunk := fi.read(1 << 20):
            fo.write(chunk)
    tmp.replace(copy)
    out = [copy]
    for name, rec in recs:
        records.write(kdir / name, rec)
        out.append(kdir / name)
    return out


# --- boot logs ----------------------------------------------------------------


def import_bootlog(
    board: Board,
    logs: Path,
    file: Path,
    kernel: str,
    label: str | None = None,
    replace: bool = False,
    root: str = "ramdisk",
    say: Say = print,
) -> dict[str, Any]:
    """A boot log -> the pseudo-kernel's boot-timing.json (boot-timing-nfs.json with root
    "nfs": one run, its milestones with the times the log has) and footprint.json (its
    Memory: line); returns what was written."""
    check_kernel_id(board, kernel, replace)
    if root not in ("ramdisk", "nfs"):
        raise BringupError(f"--root {root!r}: use 'ramdisk' or 'nfs' (the boot table the log joins)")
    src, sha, size = _source(Path(file))
    rules = load_rules(board.milestones)
    try:
        with open(src, "rb") as f:
            res = bootlog_parser.parse_bootlog(f, rules, str(file))
    except ParseError as e:
        raise BringupError(str(e)) from None
    mem = res["memory"]
    has_memory = bool(mem and (mem.get("line") or mem.get("total_kb")))
    if not res["milestones"] and not has_memory:
        raise BringupError(f"{file}: a boot log, but with no milestone and no Memory: line to import")
    kdir = Path(logs) / board.name / kernel
    recs: list[tuple[str, records.Record]] = []
    fmt = f"boot log, {res['format']}"
    prov = _provenance("bootlog", src, sha, size, f"boot log, {res['format']}", res["text"]["assumed"], label)
    if res["milestones"]:
        recs.append((records.boot_timing_name(root), _boot_timing(board, kernel, res, rules, prov, root)))
    if has_memory:
        recs.append(("footprint.json", _footprint(board, kernel, res, prov)))
    _free([kdir / name for name, _ in recs], replace)
    written = _write(kdir, "bootlog", src, recs)
    _drop_stale(kdir, {name for name, _ in recs}, root)
    for w in written:
        say(f"import: wrote {paths.rel(w)}")
    missing = [] if res["milestones"] else [f"no milestone (no {records.boot_timing_name(root)})"]
    missing += [] if has_memory else ["no Memory: line (no footprint.json)"]
    if missing:  # what the log lacks, in one line: a part of a boot, not a whole one
        say(f"import: {file}: {'; '.join(missing)}")
    return {"kernel": kernel, "format": fmt, "written": written, "records": dict(recs), "parsed": res}


def _drop_stale(kdir: Path, written: set[str], root: str) -> None:
    """An earlier boot-log import's record that this one did not replace (the new log
    has no Memory: line, say) goes: it would show values of another file."""
    models: dict[str, type[BootTiming] | type[Footprint]] = {
        records.boot_timing_name(root): BootTiming,
        "footprint.json": Footprint,
    }
    for name, model in models.items():
        f = kdir / name
        if name in written or not f.exists():
            continue
        try:
            old = records.read(f, model)
        except BringupError:
            continue
        if old.imported is not None and old.imported.kind == "bootlog":
            f.unlink()


def _boot_timing(board: Board, kernel: str, res: dict, rules, prov: Imported, root: str) -> BootTiming:
    found = res["milestones"]
    hosted = any(h["host_s"] is not None for h in found.values())
    ref = rules.reference()
    if hosted:
        if ref is not None and ref.name in found and found[ref.name]["host_s"] is not None:
            reference, t_ref = ref.name, found[ref.name]["host_s"]
        else:
            reference, t_ref = "t0", 0.0
    else:
        reference = "printk" if any(h["printk_s"] is not None for h in found.values()) else None
        t_ref = 0.0
    per: dict[str, Any] = {}
    for m in rules.milestones:
        hit = found.get(m.name)
        if hit is None:
            continue
        host = None if hit["host_s"] is None else round(hit["host_s"] - t_ref, 6)
        per[m.name] = {
            "label": m.label,
            "host": stats.summarize([host]) if host is not None else None,
            "printk": stats.summarize([hit["printk_s"]]) if hit["printk_s"] is not None else None,
            "values": [host] if host is not None else None,
            "rounds": None,  # never paired with a live kernel's rounds
            "line": hit["line"],
        }
    fault = res["fault"]
    lag = res["printk_lag_ms"]
    hidden = res["hidden_at_zero_s"]
    timing = {
        "runs": 1,
        "ok": 0 if fault else 1,
        "failed": 1 if fault else 0,
        "reference": reference,
        "kernelrelease": res["kernel_version"],
        "build_key": None,
        "milestones": per,
        "hidden_at_zero_s": stats.summarize([hidden]) if hidden is not None else None,
        "printk_lag_ms": {"median": stats.summarize([lag["median"]]), "p95": stats.summarize([lag["p95"]])}
        if lag
        else None,
        "failures": [{"run_id": RUN_ID, "error": f"line {fault['line']}: {fault['text']}"[:2000]}] if fault else [],
        "run_ids": [RUN_ID],
    }
    rec: dict[str, Any] = {
        "board": board.name,
        "created": clock.now(),
        "path": "imported",
        "root": root,
        "runs_requested": 1,
        "rootfs": None,
        "kernels": {kernel: timing},
        "run": RUN_DIRS["bootlog"],
        "imported": prov,
    }
    return records.validate(rec, BootTiming, f"{kernel}: {records.boot_timing_name(root)}")


def _footprint(board: Board, kernel: str, res: dict, prov: Imported) -> Footprint:
    mem = res["memory"]
    line = None
    if mem.get("line"):
        line = meminfo.parse_memory_line(mem["line"])  # the joined line: footprint.json's memory_line fields
        if line is not None:
            line["line"] = mem["line_no"]
    total = mem.get("total_kb")
    rec: dict[str, Any] = {
        "board": board.name,
        "kernel": kernel,
        "kernelrelease": res["kernel_version"],
        "build_key": None,
        "created": clock.now(),
        "run": RUN_DIRS["bootlog"],
        "memory_mb": total // 1024 if total and total >= 1024 else None,
        "memory_line": line,
        "free": None,
        "meminfo": {},
        "mem_eat": None,
        "kernel_code_data_kb": line["kernel_code_data_kb"] if line else None,
        "total_free_kb": None,
        "malloc_kb": None,
        "rootfs": None,
        "imported": prov,
    }
    return records.validate(rec, Footprint, f"{kernel}: footprint.json")


# --- lmbench --------------------------------------------------------------------


def result_sets(res: dict) -> list[tuple[str, list[dict]]]:
    """The parsed result sets grouped by host and OS ('frodo Linux 2.4.19'), in order:
    the rows of one host and OS are runs of one system."""
    groups: dict[str, list[dict]] = {}
    for r in res["results"]:
        name = " ".join(x for x in (r["host"], r["os"]) if x) or "-"
        groups.setdefault(name, []).append(r)
    return list(groups.items())


def _select(res: dict, host: str | None, file: Path) -> tuple[str, list[dict]]:
    sets = [(n, rs) for n, rs in result_sets(res) if any(r["measured"] for r in rs)]
    if not sets:
        raise BringupError(f"{file}: no lmbench values to import (every value is 'not measured')")
    names = ", ".join(repr(n) for n, _ in sets)
    if host is None:
        if len(sets) > 1:
            raise BringupError(f"{file}: {len(sets)} hosts in the summary ({names}); pick one with --host")
        return sets[0]
    want = " ".join(host.split())
    hits = [(n, rs) for n, rs in sets if want in (n, rs[0]["host"], rs[0]["os"])]
    if len(hits) != 1:
        why = "matches several" if hits else "matches none"
        raise BringupError(f"{file}: --host {host!r} {why} of the hosts in it ({names})")
    return hits[0]


def import_lmbench(
    board: Board,
    logs: Path,
    file: Path,
    kernel: str,
    label: str | None = None,
    host: str | None = None,
    replace: bool = False,
    say: Say = print,
) -> dict[str, Any]:
    """An lmbench summary, results file or raw output -> the pseudo-kernel's lmbench.json
    (the rows of the chosen host and OS are its runs); returns what was written."""
    check_kernel_id(board, kernel, replace)
    src, sha, size = _source(Path(file))
    try:
        with open(src, "rb") as f:
            res = lmbench_parser.parse_lmbench(f, str(file), labels=benchset.labels())
    except ParseError as e:
        raise BringupError(str(e)) from None
    name, runs = _select(res, host, Path(file))
    benchmarks, skipped = _benchmarks(runs)
    if not benchmarks:
        raise BringupError(f"{file}: no lmbench value in a unit lmbench.json holds (us, ns, MB/s, s) for {name!r}")
    version = res["lmbench_version"]
    fmt = f"lmbench {version} {res['format']}" if version else f"lmbench {res['format']}"
    chosen = f"{name}, {len(runs)} run{'s' if len(runs) != 1 else ''}" if name != "-" else f"{len(runs)} run"
    assumed = f"{res['text']['assumed']}; {chosen}"
    if skipped:
        assumed += f"; {len(skipped)} value(s) in other units left out ({', '.join(sorted(set(skipped)))})"
    prov = _provenance("lmbench", src, sha, size, fmt, assumed, label)
    rec: dict[str, Any] = {
        "board": board.name,
        "kernel": kernel,
        "created": clock.now(),
        "build_key": None,
        "mode": "imported",
        "source": {"lmbench": f"lmbench {version}" if version else None},
        "run": RUN_DIRS["lmbench"],
        "measured": True,
        "reason": None,
        "runs": len(runs),
        "retried": [],
        "benchmarks": benchmarks,
        "imported": prov,
    }
    lmbench_record = records.validate(rec, Lmbench, f"{kernel}: lmbench.json")
    kdir = Path(logs) / board.name / kernel
    _free([kdir / "lmbench.json"], replace)
    written = _write(kdir, "lmbench", src, [("lmbench.json", lmbench_record)])
    for w in written:
        say(f"import: wrote {paths.rel(w)}")
    n = sum(len(b.metrics) for b in lmbench_record.benchmarks.values())
    say(f"import: {kernel}: {n} lmbench values of {name} ({fmt})")
    return {
        "kernel": kernel,
        "format": fmt,
        "host": name,
        "written": written,
        "records": {"lmbench.json": lmbench_record},
    }


def _benchmarks(runs: list[dict]) -> tuple[dict[str, Any], list[str]]:
    """The runs' values per benchmark and metric: one value per run (their median as
    `value`, every run's in `values` when there are several); units made lmbench.json's."""
    out: dict[str, Any] = {}
    skipped: list[str] = []
    for r in runs:
        for bname, b in r["benchmarks"].items():
            for m in b["metrics"]:
                if m["unit"] not in UNITS:
                    skipped.append(m["unit"])
                    continue
                unit, factor = UNITS[m["unit"]]
                bench = out.setdefault(bname, {"group": b["group"], "rc": None, "metrics": {}, "raw_lines": set()})
                entry = bench["metrics"].setdefault(
                    m["name"], {"name": m["name"], "unit": unit, "better": m["better"], "source": m["source"], "v": []}
                )
                entry["v"].append(round(m["value"] * factor, 6))
                if m.get("line"):
                    bench["raw_lines"].add(m["line"])
    for b in out.values():
        metrics = []
        for e in b["metrics"].values():
            vals = e.pop("v")
            metrics.append({**e, "value": statistics.median(vals), "values": vals if len(vals) > 1 else None})
        b["metrics"] = metrics
        b["raw_lines"] = sorted(b["raw_lines"])
    return out, skipped
