"""The report's Workloads section from canned workloads.json records: tables, the
not-measured line (never 0), and summary bullets only for significant differences
after the family's Benjamini-Hochberg correction."""

import json

import pytest

import recordfactory as rf
from bringup import records
from bringup.measure.workloads import available
from bringup.model.board import load_board
from bringup.report import page as report

ROUNDS = list(range(1, 9))
SHA_A = [40895.0, 41010.0, 40750.0, 40990.0, 40870.0, 41100.0, 40930.0, 40800.0]
SHA_B = [v * 0.9 for v in SHA_A]  # 6.12: 10 % less throughput in every round
XZ_A = [3.10, 3.25, 3.05, 3.30, 3.15, 3.20, 3.12, 3.28]
XZ_B = [3.22, 3.08, 3.27, 3.11, 3.19, 3.31, 3.06, 3.16]  # overlapping: no claim


def metric(name, unit, better, vals):
    return {"name": name, "unit": unit, "better": better, "value": sorted(vals)[4], "values": vals, "rounds": ROUNDS}


def wl_rec(kernel, sha, xz, sysbench_ok=True):
    return {
        "board": "qemu-arm",
        "kernel": kernel,
        "created": "2026-11-23T19:00:00+00:00",
        "build_key": None,
        "mode": "quick",
        "runs": 8,
        "run_dirs": [f"workload-runs/s-r{r:02d}" for r in ROUNDS],
        "rootfs": rf.rootfs_ref("workloads"),
        "packages": {"openssl": "3.0.20-1~deb12u2"},
        "host": [],
        "disturbed": 0,
        "available": available(),  # the workload files as the measurement saw them
        "workloads": {
            "openssl": {
                "description": "openssl speed",
                "packages": ["openssl"],
                "measured": True,
                "reason": None,
                "metrics": [metric("sha256", "kB/s", "higher", sha)],
                "failures": [],
                "seconds": [5.0] * 8,
            },
            "compress": {
                "description": "xz",
                "packages": ["xz-utils"],
                "measured": True,
                "reason": None,
                "metrics": [metric("xz compress", "s", "lower", xz)],
                "failures": [],
                "seconds": xz,
            },
            "sysbench": {
                "description": "sysbench",
                "packages": ["sysbench"],
                "measured": sysbench_ok,
                "reason": None if sysbench_ok else "step cpu did not finish within 60s",
                "metrics": [metric("cpu events", "events/s", "higher", [17.0] * 8)] if sysbench_ok else [],
                "failures": []
                if sysbench_ok
                else [{"round": r, "reason": "step cpu did not finish within 60s"} for r in ROUNDS],
                "seconds": [],
            },
        },
    }


@pytest.fixture
def logs(tmp_path):
    d = tmp_path / "logs" / "qemu-arm"
    for k, sha, xz, ok in (("5.10", SHA_A, XZ_A, True), ("6.12", SHA_B, XZ_B, False)):
        records.write(d / k / "build.json", rf.build(k))
        records.write(d / k / "workloads.json", wl_rec(k, sha, xz, ok), records.Workloads)
    return tmp_path / "logs"


def test_workloads_tables_and_summary(logs):
    m = report.collect(load_board("qemu-arm"), logs)
    wt = m["workload_tables"]
    assert wt["kernels"] == ["5.10", "6.12"]
    by = {w["name"]: w for w in wt["workloads"]}
    sha = by["openssl"]["rows"][0]
    assert sha["deltas"][0]["pct"] == pytest.approx(-10.0)
    assert sha["deltas"][0]["worse"] is True and sha["deltas"][0]["significant"] is True
    xz = by["compress"]["rows"][0]
    assert xz["deltas"][0]["significant"] is False
    assert by["sysbench"]["not_measured"] == {"6.12": "step cpu did not finish within 60s"}
    assert [c["value"] for c in by["sysbench"]["rows"][0]["cells"]] == [17.0, None]  # never 0
    f = m["findings"][0]
    sections = dict(f["sections"])
    claims = [x["claim"] for x in sections["Workloads"]]
    assert len(claims) == 2, claims  # a line per workload with a tested metric, as for lmbench's groups
    assert claims[0].startswith("openssl: up to 10 % slower (sha256: 40912 → 36821 kB/s; shift ")
    assert "paired t-test (log ratios), n=8 rounds, q=" in claims[0] and "over 2 tests" in claims[0]
    assert claims[1].startswith("compress: no significant difference (closest: xz compress, n=8 rounds; medians ")
    assert f["family"] == 2  # sha256 and xz; sysbench has one side only


def test_workloads_section_renders_in_html_and_markdown(logs):
    rep = report.write(load_board("qemu-arm"), logs, say=lambda *_: None)
    html = rep.index.read_text()
    md = (rep.index.parent / "report.md").read_text()
    assert '<section id="workloads">' in html and "<h3>openssl</h3>" in html
    assert "6.12: not measured (step cpu did not finish within 60s)" in html
    assert "## Workloads" in md and "| sha256 | kB/s | higher |" in md
    assert "| sha256 | kB/s | higher | 40930 | 36837 | − 10 % * |" in md
    # the shipped workloads no record holds are named with why: 7zip_bench runs only when named
    left = {w["name"]: w["why"] for w in rep.model["workload_tables"]["left_out"]}
    assert left["7zip_bench"].startswith("runs only when named (default_set = false)")
    assert "x264" in left and left["x264"].startswith("not in these records")
    assert "openssl" not in left
    assert "Not in this study: " in md and "7zip_bench (runs only when named" in md
    assert 'id="workloads-left-out"' in html


def test_workloads_left_out_comes_from_the_records_not_the_configs(logs, monkeypatch, tmp_path):
    """The "not in this study" line is what the records saw when they ran: with
    configs/workloads/ gone at render time the page says the same; older records
    (no `available`) say nothing rather than describe today's files."""
    from bringup.model import workload as wm

    before = report.collect(load_board("qemu-arm"), logs)["workload_tables"]["left_out"]
    assert before  # 7zip_bench and x264 are in configs/workloads/ and in no record
    monkeypatch.setattr(wm, "workloads_dir", lambda: tmp_path / "no-such-dir")
    assert report.collect(load_board("qemu-arm"), logs)["workload_tables"]["left_out"] == before
    for k in ("5.10", "6.12"):
        f = logs / "qemu-arm" / k / "workloads.json"
        old = json.loads(f.read_text())
        old.pop("available")
        old.pop("environment", None)
        f.write_text(json.dumps({**old, "schema": "bringup.workloads/3"}))
    assert report.collect(load_board("qemu-arm"), logs)["workload_tables"]["left_out"] == []


def test_relative_performance_chart(logs):
    """Each metric of 6.12 against 5.10 as performance relative to 5.10 (>1 better, either
    direction), with a 95 % interval; the chart is in the page and the Markdown."""
    rep = report.write(load_board("qemu-arm"), logs, say=lambda *_: None)
    rel = rep.model["workload_relative"]
    assert rel["base"] == "5.10" and rel["kernels"] == ["6.12"]
    rows = {r["label"]: r["ratios"]["6.12"] for r in rel["rows"]}
    sha = rows["openssl: sha256"]  # 10 % less throughput in every round: 0.9, the interval tight around it
    assert sha["ratio"] == pytest.approx(0.9, abs=1e-3) and sha["lo"] <= sha["ratio"] <= sha["hi"] < 1
    xz = rows["compress: xz compress"]  # lower is better; overlapping rounds: the interval spans 1
    assert xz["lo"] < 1 < xz["hi"]
    assert "sysbench: cpu events" not in rows  # one side only: nothing to relate
    assert 'data-chart="chart-workloads"' in rep.index.read_text()
    assert "![workload performance relative to 5.10](charts/workloads.svg)" in rep.markdown.read_text()
    assert (rep.index.parent / "charts" / "workloads.svg").is_file()


def test_a_kernel_relative_to_itself_is_one():
    from bringup.report import workloads as wr

    runs = {"a": [3.1, 3.2, 3.0], "b": [3.1, 3.2, 3.0]}
    wt = {"kernels": ["a", "b"], "workloads": [{"name": "w", "rows": [{"name": "m", "better": "lower", "runs": runs}]}]}
    (row,) = wr.relative(wt)["rows"]
    assert row["ratios"]["b"]["ratio"] == 1.0 and row["ratios"]["b"]["lo"] <= 1.0 <= row["ratios"]["b"]["hi"]


def test_workloads_section_and_chart_render_in_a_real_browser(logs, tmp_path):
    """The page with a Workloads section, opened in headless chromium: no console error,
    the section's tables in the DOM, the relative-performance chart drawn."""
    import re

    from browser import open_page

    index = report.write(load_board("qemu-arm"), logs, say=lambda *_: None).index
    res = open_page(index, tmp_path)
    assert res["console"] == [], res["console"]
    dom = res["dom"]
    assert '<section id="workloads">' in dom and "<h3>openssl</h3>" in dom
    assert 'id="workloads-left-out"' in dom
    m = re.search(r'data-chart="chart-workloads"[^>]*data-rendered="(\d+)x(\d+)"', dom)
    assert m and int(m.group(1)) > 200 and int(m.group(2)) > 50, re.findall(r"data-chart=\"[^\"]*\"[^>]*", dom)
