"""The report renders the same page from the same records: index.html, report.md,
model.json and the charts of a few fixed sets of records, compared byte for byte
with the pages the report made before its model was typed (tests/data/report-golden/,
captured from main at 45fb26f; since then one deliberate change: the imported kernels'
links went to "<built-in method copy of dict ...>" (the template's e.copy was the dict's
method) and now go to the copy of the imported file; and one in session 13: the legends name the
study's one test from stats.RULE, the workloads chart draws that test's ratio and interval, paired by
round, and the lmbench and workload rows keep their rounds in model.json; and one in session 14: the
workloads chart's caption names that ratio's interval, and the A/A floor's band on the instruction
clock).  The clock is fixed and the paths of this checkout and of the test's directory are written as <repo> and <tmp>.

BRINGUP_GOLDEN=update writes the golden files again (only when a change to the page
is meant: say so in the commit)."""

import json
import os
import shutil
from pathlib import Path

import pytest

import test_buildcost
import test_report
import test_report_records_only
import test_workloads_report
from bringup import importer, records
from bringup.model.board import load_board
from bringup.report import page as report
from bringup.util import clock

GOLDEN = Path(__file__).parent / "data" / "report-golden"
REPO = Path(__file__).resolve().parent.parent
NOW = "2026-11-27T12:00:00+00:00"


def _live(tmp_path: Path) -> Path:
    """Boot timing, footprint, lmbench and builds (test_report), plus workloads and the cold build cost."""
    logs = test_report.logs.__wrapped__(tmp_path)
    d = logs / "qemu-arm"
    wr = test_workloads_report
    for k, ok in (("5.10", True), ("6.12", False)):
        sha = wr.SHA_A if k == "5.10" else wr.SHA_B
        xz = wr.XZ_A if k == "5.10" else wr.XZ_B
        records.write(d / k / "workloads.json", wr.wl_rec(k, sha, xz, ok), records.Workloads)
    nfs = records.read(d / records.boot_timing_name(), records.BootTiming)
    records.write(d / records.boot_timing_name("nfs"), nfs.model_copy(update={"root": "nfs"}))
    keys = {k: records.read(d / k / "build.json", records.Build).key for k in ("5.10", "6.12")}
    test_buildcost.write_cost(logs, keys)
    return logs


def _imported(tmp_path: Path) -> Path:
    """The live kernels with an imported lmbench summary and an imported boot log (test_import)."""
    logs = test_report.logs.__wrapped__(tmp_path)
    board = load_board("qemu-arm")
    real = Path(__file__).parent / "data" / "real"
    quiet = lambda *_: None  # noqa: E731
    importer.import_lmbench(
        board,
        logs,
        real / "lmbench" / "lmbench2-summary-5kernels-frodo-i686.txt",
        "2.4.18-frodo",
        host="Linux 2.4.18",
        say=quiet,
    )
    importer.import_bootlog(
        board, logs, real / "bootlogs" / "redboot-2.6.18-xscale-ixp425-login-interleaved.log", "2.6.18-ixp", say=quiet
    )
    return logs


def _records_only(tmp_path: Path) -> Path:
    """Recorded environments and the symbol and .config diffs (test_report_records_only)."""
    logs = tmp_path / "logs"
    test_report_records_only.write_logs(logs, tmp_path)
    return logs


SCENARIOS = {"live": _live, "imported": _imported, "records-only": _records_only}


def _normalise(text: str, tmp_path: Path) -> str:
    for path, name in ((tmp_path.resolve(), "<tmp>"), (tmp_path, "<tmp>"), (REPO, "<repo>")):
        text = text.replace(str(path), name)
    return text


def _rendered(out: Path, tmp_path: Path) -> dict[str, str]:
    files = sorted(p for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    return {str(p.relative_to(out)): _normalise(p.read_text(), tmp_path) for p in files}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_page_is_the_one_rendered_before(scenario, tmp_path, monkeypatch):
    monkeypatch.setattr(clock, "now", lambda: NOW)
    logs = SCENARIOS[scenario](tmp_path)
    rep = report.write(load_board("qemu-arm"), logs, say=lambda *_: None)
    got = _rendered(rep.index.parent, tmp_path)
    want_dir = GOLDEN / scenario
    if os.environ.get("BRINGUP_GOLDEN") == "update":
        shutil.rmtree(want_dir, ignore_errors=True)
        for name, text in got.items():
            (want_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (want_dir / name).write_text(text)
    want = {str(p.relative_to(want_dir)): p.read_text() for p in sorted(want_dir.rglob("*")) if p.is_file()}
    assert sorted(got) == sorted(want)
    for name in ("report.md", "index.html", "model.json"):
        assert got[name] == want[name], f"{scenario}/{name} differs from the golden page"
    assert got == want
    assert not any(" object at 0x" in text for text in got.values())  # a repr, not a value (e.copy was dict.copy)
    model = json.loads(got["model.json"])
    assert model["generated"] == NOW and model["kernels"][:2] == ["5.10", "6.12"]


def test_the_typed_model_is_the_page_s_mapping(tmp_path, monkeypatch):
    """ReportModel: a section per part; as_dict() is the mapping the templates read and json()
    is model.json's, in the golden page's key order."""
    from bringup.report import model as rm

    monkeypatch.setattr(clock, "now", lambda: NOW)
    logs = _live(tmp_path)
    m = report.build_model(load_board("qemu-arm"), logs)
    assert isinstance(m.boot, rm.BootSection) and isinstance(m.build, rm.BuildSection)
    assert m.boot.boot_nfs is not None and m.build.build_cost is not None and m.workloads.workload_tables["workloads"]
    want = json.loads((GOLDEN / "live" / "model.json").read_text())
    assert list(m.json()) == list(want)
    assert set(m.as_dict()) - set(m.json()) == set(rm.NOT_IN_JSON)
    assert m.as_dict()["boot_rows"] is m.boot.boot_rows  # one model: the mapping shares the sections' values
