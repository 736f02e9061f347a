"""bringup import: real boot logs and lmbench summaries of other eras stored as the
records of a pseudo-kernel, read back through the record models, shown by the report
beside a live run and never tested.  Expected values are read by hand from the
samples in tests/data/real/ (the line numbers and numbers quoted in the comments)."""

import json
import re
from pathlib import Path

import pytest

import recordfactory as rf
from bringup import cli, importer, records
from bringup.errors import BringupError
from bringup.model.board import load_board
from bringup.report import page as report
from test_report import logs  # noqa: F401  (the live-run fixture: 5.10 and 6.12 of qemu-arm, 5 runs each)

REAL = Path(__file__).parent / "data" / "real"
BOOT = REAL / "bootlogs"
LMB = REAL / "lmbench"
BOARD = "qemu-arm"


@pytest.fixture
def board():
    return load_board(BOARD)


def quiet(_msg: str) -> None:
    pass


def files_under(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()) if d.exists() else []


def stamped(src: Path, dst: Path) -> Path:
    """The log as grabserial would have captured it: line i at host time i * 0.01 s."""
    lines = src.read_bytes().split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    dst.write_bytes(b"".join(b"[%12.6f %9.6f] %s\n" % (i * 0.01, 0.01, x) for i, x in enumerate(lines, 1)))
    return dst


# --- boot logs ------------------------------------------------------------------


def test_bootlog_26_arm_printk_times_and_memory_line(tmp_path, board):
    """redboot-2.6.18: line 18 "[17179569.184000] Linux version 2.6.18.8", line 30
    "Memory: 64MB = 64MB total", line 31 "Memory: 62860KB available (1588K code, 327K
    data, 88K init)", line 82 "[17179570.016000] Freeing init memory: 88K", line 154
    "WILIBOX login: " (no printk time: userspace)."""
    src = BOOT / "redboot-2.6.18-xscale-ixp425-login-interleaved.log"
    res = importer.import_bootlog(board, tmp_path, src, "2.6.18-ixp", label="LigoWave", say=quiet)
    kdir = tmp_path / BOARD / "2.6.18-ixp"
    bt = records.read(kdir / "boot-timing.json", records.BootTiming)
    assert bt.imported is not None and bt.rootfs is None and bt.path == "imported"
    assert bt.imported.source == str(src.resolve()) and bt.imported.label == "LigoWave"
    assert bt.imported.sha256 == __import__("hashlib").sha256(src.read_bytes()).hexdigest()
    assert bt.imported.format == "boot log, printk"
    k = bt.kernels["2.6.18-ixp"]
    assert (k.runs, k.ok, k.failed, k.reference, k.kernelrelease) == (1, 1, 0, "printk", "2.6.18.8")
    lv = k.milestones["linux_version"]
    assert lv.host is None and lv.printk is not None and lv.printk.median == 17179569.184 and lv.line == 18
    fi = k.milestones["freeing_init"]
    assert fi.printk is not None and fi.printk.median == 17179570.016 and fi.line == 82
    login = k.milestones["login"]
    assert login.host is None and login.printk is None and login.line == 154  # reached, no time in the log
    assert k.milestones["kernel_load"].line == 14  # "RedBoot> fis load kernel1"

    footprint_record = records.read(kdir / "footprint.json", records.Footprint)
    ml = footprint_record.memory_line
    assert ml is not None and ml.line == 31
    assert (ml.available_kb, ml.kernel_code_kb, ml.data_kb, ml.init_kb) == (62860, 1588, 327, 88)
    assert footprint_record.kernel_code_data_kb == 1588 + 327
    assert footprint_record.memory_mb == 64  # "Memory: 64MB = 64MB total"
    # not in a boot log: absent, not zero
    assert (
        footprint_record.malloc_kb is None
        and footprint_record.mem_eat is None
        and footprint_record.total_free_kb is None
        and footprint_record.free is None
    )
    assert footprint_record.kernelrelease == "2.6.18.8"
    copy = kdir / "imported-bootlog" / "console.log"
    assert copy.read_bytes() == src.read_bytes()  # verbatim: the report links to its lines
    assert copy.read_text().splitlines()[30].endswith("] Memory: 62860KB available (1588K code, 327K data, 88K init)")
    assert {p.name for p in res["written"]} == {"console.log", "boot-timing.json", "footprint.json"}


def test_bootlog_24_ppc_wrapped_without_times(tmp_path, board):
    """ppcload-2.4.20: no times at all; lines 12 "Linux version 2.4.20_mvl31-ml300 ..."
    and 23-24 "Memory: 63264k available (1068k kernel code, 368k / data, 60k init, 0k
    highmem)" wrapped by the mailer; line 79 "Freeing unused kernel memory: 60k init"."""
    src = BOOT / "ppcload-2.4.20-ppc405-ml300-mail-wrapped.log"
    importer.import_bootlog(board, tmp_path, src, "2.4.20-ml300", say=quiet)
    kdir = tmp_path / BOARD / "2.4.20-ml300"
    k = records.read(kdir / "boot-timing.json", records.BootTiming).kernels["2.4.20-ml300"]
    assert k.reference is None and k.kernelrelease == "2.4.20_mvl31-ml300"
    assert {
        n: (s.line, s.host, s.printk) for n, s in k.milestones.items() if n in ("linux_version", "freeing_init")
    } == {
        "linux_version": (12, None, None),
        "freeing_init": (79, None, None),
    }
    footprint_record = records.read(kdir / "footprint.json", records.Footprint)
    assert footprint_record.memory_line is not None and footprint_record.memory_line.line == 23
    assert (
        footprint_record.memory_line.kernel_code_kb,
        footprint_record.memory_line.data_kb,
        footprint_record.memory_line.init_kb,
    ) == (1068, 368, 60)
    assert footprint_record.kernel_code_data_kb == 1436
    assert footprint_record.memory_mb is None  # 2.4 PowerPC prints no total


def test_bootlog_68_modern_memory_line(tmp_path, board):
    """dmesg-6.8.6: line 26 "Memory: 449408K/622592K available (18432K kernel code,
    2459K rwdata, 6288K rodata, 1024K init, 6735K bss, 42112K reserved, 131072K cma-reserved)"."""
    importer.import_bootlog(board, tmp_path, BOOT / "dmesg-6.8.6-armv7-imx6-riotboard.log", "6.8.6-riot", say=quiet)
    footprint_record = records.read(tmp_path / BOARD / "6.8.6-riot" / "footprint.json", records.Footprint)
    ml = footprint_record.memory_line
    assert ml is not None and ml.wording == "modern" and ml.line == 26
    assert (ml.available_kb, ml.total_kb, ml.kernel_code_kb, ml.init_kb, ml.bss_kb, ml.reserved_kb) == (
        449408,
        622592,
        18432,
        1024,
        6735,
        42112,
    )
    assert ml.parts_kb["cma-reserved"] == 131072
    assert footprint_record.kernel_code_data_kb == 18432 + 2459 + 6288
    assert footprint_record.memory_mb == 622592 // 1024 and footprint_record.kernelrelease == "6.8.6-riotboard"


def test_bootlog_with_host_stamps_times_from_the_kernel_load(tmp_path, board):
    """The same 2.6.18 log as grabserial captures it (line i at i * 0.01 s): times are
    host times since the kernel load (line 14), like a live run's."""
    src = stamped(BOOT / "redboot-2.6.18-xscale-ixp425-login-interleaved.log", tmp_path / "stamped.log")
    importer.import_bootlog(board, tmp_path / "logs", src, "2.6.18-stamped", say=quiet)
    bt = records.read(tmp_path / "logs" / BOARD / "2.6.18-stamped" / "boot-timing.json", records.BootTiming)
    assert bt.imported is not None and bt.imported.format == "boot log, stamped"
    k = bt.kernels["2.6.18-stamped"]
    assert k.reference == "kernel_load"
    host = {n: s.host.median for n, s in k.milestones.items() if s.host is not None}
    assert host["linux_version"] == pytest.approx((18 - 14) * 0.01)
    assert host["login"] == pytest.approx((154 - 14) * 0.01)
    assert k.milestones["linux_version"].values == [pytest.approx(0.04)]
    assert k.milestones["linux_version"].rounds is None  # never paired with a live kernel's rounds


def test_bootlog_with_a_panic_is_a_failed_run(tmp_path, board):
    """yamon-2.4.25: ends in the old-style "Kernel panic: VFS: Unable to mount root fs on 1f:01"."""
    src = BOOT / "yamon-2.4.25-mips-au1550-cramfs-panic.log"
    importer.import_bootlog(board, tmp_path, src, "2.4.25-au1550", root="nfs", say=quiet)
    kdir = tmp_path / BOARD / "2.4.25-au1550"
    assert not (kdir / "boot-timing.json").exists()
    k = records.read(kdir / "boot-timing-nfs.json", records.BootTiming).kernels["2.4.25-au1550"]
    assert (k.ok, k.failed) == (0, 1)
    assert "Kernel panic: VFS: Unable to mount root fs on 1f:01" in (k.failures[0].error or "")


# --- lmbench --------------------------------------------------------------------


def metrics(lmbench_record: records.Lmbench) -> dict[str, records.measure.Metric]:
    return {m.name: m for b in lmbench_record.benchmarks.values() for m in b.metrics}


def test_lmbench2_summary_one_host_of_five(tmp_path, board):
    """lmbench2-summary-5kernels-frodo: line 25 "frodo Linux 2.4.19 797 0.40 0.56 3.07
    3.88 1.00 3.19 129. 1113 13.K"; line 36 "... 0.900 4.2900 15.3 ..." (2p/0K, 2p/16K,
    2p/64K); line 69 bandwidths "808. 680. <blank TCP> 187.2 203.8 101.5 101.4 203. 190.1"."""
    src = LMB / "lmbench2-summary-5kernels-frodo-i686.txt"
    importer.import_lmbench(board, tmp_path, src, "2.4.19-frodo", host="Linux 2.4.19", label="2002", say=quiet)
    lmbench_record = records.read(tmp_path / BOARD / "2.4.19-frodo" / "lmbench.json", records.Lmbench)
    assert lmbench_record.imported is not None and lmbench_record.imported.format == "lmbench 2.0 summary"
    assert "frodo Linux 2.4.19, 1 run" in lmbench_record.imported.assumed
    assert (lmbench_record.mode, lmbench_record.runs, lmbench_record.measured, lmbench_record.build_key) == (
        "imported",
        1,
        True,
        None,
    )
    m = metrics(lmbench_record)
    # the names, units and better directions of a live run's metrics
    assert (m["Simple syscall"].value, m["Simple syscall"].unit, m["Simple syscall"].better) == (0.40, "us", "lower")
    assert m["Simple stat"].value == 3.07 and m["Simple open/close"].value == 3.88
    assert m["Process fork+exit"].value == 129.0  # "129."
    assert m["Process fork+/bin/sh -c"].value == 13000.0  # "13.K"
    assert m["ctx 2p/0K"].value == 0.9 and m["ctx 2p/64K"].value == 15.3
    assert lmbench_record.benchmarks["lat_ctx_0k"].group == "Context switching"  # as configs/lmbench.toml's lat_ctx_0k
    assert (m["Pipe bandwidth"].value, m["Pipe bandwidth"].unit, m["Pipe bandwidth"].better) == (
        808.0,
        "MB/s",
        "higher",
    )
    assert "TCP bandwidth" not in m  # blank: not measured, not 0
    assert m["Simple syscall"].values is None  # one run
    assert lmbench_record.benchmarks["lat_syscall_null"].raw_lines == [25]
    assert lmbench_record.benchmarks["lat_ctx_0k"].raw_lines == [36]


def test_lmbench2_five_runs_of_one_host_are_its_runs(tmp_path, board):
    """lmbench2-summary-5runs-same-host-2.5.55: five rows of "benchtest Linux 2.5.55";
    null call 0.38 0.41 0.38 0.41 0.41, fork proc 303 239 253 291 237, Pipe bandwidth
    634 248 608 667 681 (lines 21-25, 59-63)."""
    importer.import_lmbench(board, tmp_path, LMB / "lmbench2-summary-5runs-same-host-2.5.55.txt", "2.5.55", say=quiet)
    lmbench_record = records.read(tmp_path / BOARD / "2.5.55" / "lmbench.json", records.Lmbench)
    assert lmbench_record.runs == 5
    m = metrics(lmbench_record)
    assert m["Simple syscall"].values == [0.38, 0.41, 0.38, 0.41, 0.41] and m["Simple syscall"].value == 0.41
    assert m["Process fork+exit"].values == [303, 239, 253, 291, 237] and m["Process fork+exit"].value == 253
    assert m["Pipe bandwidth"].value == 634 and m["Pipe bandwidth"].rounds is None


def test_lmbench1_summary_and_raw_output(tmp_path, board):
    """lmbench1.0 (1996): line 10 "trombetas Linux 1.3.97 50 14 8.9K 38.3K 56K 354 86 101"
    (Null Syscall, Null Process, Simple Process, /bin/sh Process, Mmap lat, 2-proc and 8-proc
    ctxsw) is one of four hosts, two of them "trombetas"; lmbench2 alpha8 raw output:
    "Simple syscall: 0.3226 microseconds", "Pagefaults on /something.avi: 13098 usecs",
    lat_fs "0k 1000 36770 123993" (creates/s, removes/s)."""
    importer.import_lmbench(
        board, tmp_path, LMB / "lmbench1.0-summary-linux1.3-vs-sunos.txt", "1.3.97", host="Linux 1.3.97", say=quiet
    )
    lmbench_record = records.read(tmp_path / BOARD / "1.3.97" / "lmbench.json", records.Lmbench)
    assert lmbench_record.imported is not None and lmbench_record.imported.format == "lmbench 1.0 summary"
    assert "trombetas Linux 1.3.97" in lmbench_record.imported.assumed
    m = metrics(lmbench_record)
    assert m["Simple syscall"].value == 14.0 and m["Process fork+exit"].value == 8900.0
    assert m["Process fork+/bin/sh -c"].value == 56000.0 and m["2-process context switch (lmbench 1.0)"].value == 86
    assert lmbench_record.benchmarks["lat_syscall_null"].raw_lines == [10]

    importer.import_lmbench(board, tmp_path, LMB / "lmbench2alpha8-raw-2.4.10-ac10-preempt.txt", "2.4.10", say=quiet)
    lmbench_record = records.read(tmp_path / BOARD / "2.4.10" / "lmbench.json", records.Lmbench)
    m = metrics(lmbench_record)
    assert m["Simple syscall"].value == 0.3226 and m["Simple syscall"].unit == "us"
    assert m["Pagefaults on /something.avi"].value == 13098.0
    assert m["0K file create"].value == pytest.approx(1e6 / 36770, abs=0.001)
    assert lmbench_record.imported is not None and lmbench_record.imported.format == "lmbench raw"


def test_lmbench3_summary_two_runs(tmp_path, board):
    """lmbench3-summary-beaglebone: lines 19-20 "B1 Linux 3.8.13+ 995 1.30 ..." and
    "... 994 4.26 ..." (null call of the two runs)."""
    importer.import_lmbench(board, tmp_path, LMB / "lmbench3-summary-beaglebone-black-armv7.txt", "3.8-bbb", say=quiet)
    lmbench_record = records.read(tmp_path / BOARD / "3.8-bbb" / "lmbench.json", records.Lmbench)
    assert lmbench_record.runs == 2 and metrics(lmbench_record)["Simple syscall"].values == [1.30, 4.26]
    assert lmbench_record.imported is not None and lmbench_record.imported.format == "lmbench 3.0 summary"


# --- bad input: one line, non-zero, nothing written ---------------------------------


def run(capsys, *argv) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, says",
    [
        (["bootlog", "{garbage}", "--kernel", "x1"], "not a boot log"),
        (["bootlog", "{notes}", "--kernel", "x1"], "not a boot log"),
        (["lmbench", "{garbage}", "--kernel", "x1"], "not lmbench output"),
        (["lmbench", "{notes}", "--kernel", "x1"], "not lmbench output"),
        (["bootlog", "{missing}", "--kernel", "x1"], "no such file to import"),
        (["lmbench", "{dir}", "--kernel", "x1"], "is a directory"),
        (["lmbench", "{frodo}", "--kernel", "x1"], "5 hosts in the summary ('frodo Linux 2.4.18'"),
        (["lmbench", "{frodo}", "--kernel", "x1", "--host", "frodo"], "--host 'frodo' matches several"),
        (["lmbench", "{frodo}", "--kernel", "x1", "--host", "gandalf"], "--host 'gandalf' matches none"),
        (["lmbench", "{frodo}", "--kernel", "../evil", "--host", "Linux 2.4.18"], "not a kernel id"),
        (["lmbench", "{frodo}", "--kernel", "a;rm -rf x", "--host", "Linux 2.4.18"], "not a kernel id"),
        (["lmbench", "{frodo}", "--kernel", "$(id)", "--host", "Linux 2.4.18"], "not a kernel id"),
        (["lmbench", "{frodo}", "--kernel", "", "--host", "Linux 2.4.18"], "--kernel: empty"),
        (["lmbench", "{frodo}", "--kernel", "report", "--host", "Linux 2.4.18"], "is not a kernel's directory"),
        (["lmbench", "{frodo}", "--kernel", "5.10", "--host", "Linux 2.4.18"], "a kernel of board qemu-arm"),
        (["bootlog", "{boot}", "--kernel", "x1", "--host", "frodo"], "--host: only for an lmbench summary"),
        (["lmbench", "{frodo}", "--kernel", "x1", "--root", "nfs", "--host", "Linux 2.4.18"], "--root: only for"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, argv, says):
    out = tmp_path / "logs"
    monkeypatch.setenv("BRINGUP_LOGS", str(out))
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 64)
    notes = tmp_path / "notes.txt"
    notes.write_text("Some notes about a board.\nNothing of a boot or a benchmark here.\n")
    (tmp_path / "adir").mkdir()
    names = {
        "garbage": str(garbage),
        "notes": str(notes),
        "missing": str(tmp_path / "nope.log"),
        "dir": str(tmp_path / "adir"),
        "frodo": str(LMB / "lmbench2-summary-5kernels-frodo-i686.txt"),
        "boot": str(BOOT / "dmesg-6.8.6-armv7-imx6-riotboard.log"),
    }
    code, err = run(capsys, "import", *[a.format(**names) for a in argv], "--board", BOARD)
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bringup: error: "), err
    assert says in lines[0], lines[0]
    assert "Traceback" not in err
    assert files_under(out) == []


def test_an_earlier_import_is_kept_unless_replace(tmp_path, monkeypatch, capsys):
    out = tmp_path / "logs"
    monkeypatch.setenv("BRINGUP_LOGS", str(out))
    frodo = str(LMB / "lmbench2-summary-5kernels-frodo-i686.txt")
    base = ["import", "lmbench", frodo, "--board", BOARD, "--kernel", "old"]
    assert run(capsys, *base, "--host", "Linux 2.4.18")[0] == 0
    before = (out / BOARD / "old" / "lmbench.json").read_bytes()
    code, err = run(capsys, *base, "--host", "Linux 2.4.19")
    assert code == 2 and err.count("\n") == 1 and "lmbench.json: exists" in err and "--replace" in err
    assert (out / BOARD / "old" / "lmbench.json").read_bytes() == before
    assert run(capsys, *base, "--host", "Linux 2.4.19", "--replace")[0] == 0
    lmbench_record = records.read(out / BOARD / "old" / "lmbench.json", records.Lmbench)
    assert metrics(lmbench_record)["Simple stat"].value == 3.07  # 2.4.19's, line 25


def test_replacing_a_boot_log_drops_what_the_new_one_lacks(tmp_path, board):
    """The 6.8.6 log has a Memory: line; the barebox 5.15 excerpt ends after 16 kernel
    lines, before any (SOURCES.md): its import replaces the boot timing and removes
    the footprint of the earlier log."""
    importer.import_bootlog(board, tmp_path, BOOT / "dmesg-6.8.6-armv7-imx6-riotboard.log", "k", say=quiet)
    kdir = tmp_path / BOARD / "k"
    assert (kdir / "footprint.json").exists()
    short = BOOT / "barebox-2022.02-5.15.63-armv7-imx6ull-truncated.log"
    with pytest.raises(BringupError, match="boot-timing.json: exists"):
        importer.import_bootlog(board, tmp_path, short, "k", say=quiet)
    importer.import_bootlog(board, tmp_path, short, "k", replace=True, say=quiet)
    assert not (kdir / "footprint.json").exists()
    bt = records.read(kdir / "boot-timing.json", records.BootTiming)
    assert bt.kernels["k"].kernelrelease == "5.15.63" and bt.imported is not None
    assert bt.imported.source.endswith(short.name)


def test_a_board_kernel_id_is_refused_unless_replace(tmp_path, board):
    with pytest.raises(BringupError, match="a kernel of board qemu-arm"):
        importer.check_kernel_id(board, board.kernels[0].id)
    importer.check_kernel_id(board, board.kernels[0].id, replace=True)


def test_records_of_the_previous_version_still_read(tmp_path):
    """/4 only added optional fields and widened a few: a /3 record reads as it is."""
    f = tmp_path / "lmbench.json"
    d = json.loads(rf.lmbench("5.10").model_dump_json(by_alias=True))
    d["schema"] = "bringup.lmbench/3"
    del d["imported"]
    f.write_text(json.dumps(d))
    assert records.read(f, records.Lmbench).imported is None


# --- the report -------------------------------------------------------------------------


def test_report_shows_an_imported_lmbench_summary_beside_a_live_run(logs, board):  # noqa: F811
    src = LMB / "lmbench2-summary-5kernels-frodo-i686.txt"
    importer.import_lmbench(board, logs, src, "2.4.18-frodo", host="Linux 2.4.18", say=quiet)
    importer.import_bootlog(
        board, logs, BOOT / "redboot-2.6.18-xscale-ixp425-login-interleaved.log", "2.6.18-ixp", say=quiet
    )
    rep = report.write(board, logs, say=quiet)
    m = rep.model
    assert m["kernels"] == ["5.10", "6.12", "2.4.18-frodo", "2.6.18-ixp"]  # live kernels first: the base is live
    assert m["left_out"] == []
    # the lmbench table has the imported column, with the summary's value and a link to its line
    lmk = m["lmbench_groups"]["kernels"]
    assert lmk == ["5.10", "6.12", "2.4.18-frodo"]
    rows = {r["name"]: r for g in m["lmbench_groups"]["groups"] for r in g["rows"]}
    ctx = rows["ctx 2p/0K"]
    cell = ctx["cells"][2]
    assert cell["value"] == 0.99  # line 35: "frodo Linux 2.4.18 0.990 ..."
    assert cell["link"] == "../2.4.18-frodo/imported-lmbench/lmbench.txt#L35"
    assert ctx["deltas"][1] == {"pct": -90.1, "worse": None, "p": None, "significant": None, "q": None}
    # the imported kernel's findings: where it came from, values side by side, no claim
    f = next(x for x in m["findings"] if x["kernel"] == "2.4.18-frodo")
    items = [it for _, its in f["sections"] for it in its]
    assert f["tested"] == {} and f["family"] == 0
    assert all(it["kind"] == "imported" and it["significant"] is None for it in items)
    claims = [it["claim"] for it in items]
    sha = __import__("hashlib").sha256(src.read_bytes()).hexdigest()
    mark = f"imported from {src.name} (sha256 {sha[:12]}…, lmbench 2.0 summary)"
    assert f"2.4.18-frodo: {mark}" in claims
    assert "Context switching: 1 metric(s) side by side, -90 % (imported, not tested)" in claims
    assert not any(re.search(r"slower|faster|significant|larger|smaller|\bmore\b|\bless\b", c) for c in claims)
    # the live comparison is unchanged: still tested
    live = next(x for x in m["findings"] if x["kernel"] == "6.12")
    assert live["family"] > 0
    # the boot log: its column in the boot table (printk times only: no delta), its footprint
    boot_rows = {r["name"]: r for r in m["boot_rows"]}
    fi = boot_rows["freeing_init"]
    c = next(c for c in fi["cells"] if c and c["kernel"] == "2.6.18-ixp")
    assert c["median"] is None and c["text"] == "printk 17179570.016 s"
    assert c["link"] == "../2.6.18-ixp/imported-bootlog/console.log#L82"
    assert fi["deltas"][-1] is None
    fprow = m["footprint_rows"][0]
    assert [c["value"] for c in fprow["cells"]] == [1144, 1528, 1915]
    assert [c["value"] for c in m["footprint_rows"][2]["cells"]][2] is None  # malloc: not in a boot log
    fb = next(x for x in m["findings"] if x["kernel"] == "2.6.18-ixp")
    fclaims = [it["claim"] for _, its in fb["sections"] for it in its]
    assert "kernel code + data: 1144 → 1915 kB, +67 % (imported, not tested)" in fclaims
    # the page and the Markdown say it
    html, md = rep.index.read_text(), rep.markdown.read_text()
    for text in (html, md):
        assert mark in text
        assert "imported, not tested" in text
    assert '<th>2.4.18-frodo <span class="imp-mark"' in html
    assert "| metric | unit | better | 5.10 | 6.12 | 2.4.18-frodo (imported) |" in md
    assert "| until | 5.10 | 6.12 | 2.6.18-ixp (imported) | Delta 6.12 | Delta 2.6.18-ixp |" in md
    assert "make import KIND=lmbench FILE=" in md


def test_report_of_imported_kernels_only(tmp_path, board):
    out = tmp_path / "logs"
    importer.import_lmbench(
        board, out, LMB / "lmbench2-summary-5kernels-frodo-i686.txt", "a", host="Linux 2.4.18", say=quiet
    )
    importer.import_lmbench(
        board, out, LMB / "lmbench2-summary-5kernels-frodo-i686.txt", "b", host="Linux 2.5.33", say=quiet
    )
    importer.import_bootlog(board, out, BOOT / "yamon-2.4.25-mips-au1550-cramfs-panic.log", "c", root="nfs", say=quiet)
    rep = report.write(board, out, say=quiet)
    assert rep.model["kernels"] == ["a", "b", "c"]
    items = [it for f in rep.model["findings"] for _, its in f["sections"] for it in its]
    assert items and all(it["kind"] == "imported" for it in items)
    md = rep.markdown.read_text()
    assert "Simple syscall" in md and "No boot-timing record." in md
    assert "Imported boot logs only (no NFS-root boot measured here)." in md
    nfs = {r["name"]: r for r in rep.model["boot_nfs"]["rows"]}
    assert nfs["linux_version"]["cells"][0]["text"] == "reached"  # a raw capture: no times
    assert nfs["linux_version"]["cells"][0]["link"] == "../c/imported-bootlog/console.log#L66"


def test_report_with_imports_renders_in_a_real_browser(logs, board, tmp_path):  # noqa: F811
    from browser import open_page

    importer.import_lmbench(
        board, logs, LMB / "lmbench2-summary-5kernels-frodo-i686.txt", "old", host="Linux 2.4.18", say=quiet
    )
    importer.import_bootlog(board, logs, BOOT / "uboot-spl-2017.05-jumpnow-4.9.33-armv7-beaglebone-login.log", "bbb")
    res = open_page(report.write(board, logs, say=quiet).index, tmp_path)
    assert res["console"] == [], res["console"]
    assert 'data-charts-rendered="3/3"' in res["dom"]
    assert res["dom"].count('class="imp-mark"') >= 4  # the note and the boot, footprint, lmbench headers


def test_an_imported_summarys_page_fault_joins_the_live_pagefault_row(logs, board):  # noqa: F811
    """lat_pagefault names its one metric after the file it faulted on ("Pagefaults on
    /tmp/lmb.file"); a summary calls it "Page fault": one row, both values."""
    for k, vals in (("5.10", [0.61, 0.62, 0.6, 0.63, 0.61]), ("6.12", [0.7, 0.71, 0.69, 0.72, 0.7])):
        f = logs / "qemu-arm" / k / "lmbench.json"
        rec = records.read(f, records.Lmbench)
        bench = {
            "group": "File & VM system latencies",
            "rc": 0,
            "metrics": [rf.metric("Pagefaults on /tmp/lmb.file", sorted(vals)[2], "us", vals)],
            "raw_lines": [],
        }
        benchmarks = {n: b.model_dump() for n, b in rec.benchmarks.items()} | {"lat_pagefault": bench}
        records.write(f, rf.lmbench(k, runs=5, benchmarks=benchmarks))
    importer.import_lmbench(
        board, logs, LMB / "lmbench2-summary-5kernels-frodo-i686.txt", "2.4.18-frodo", host="Linux 2.4.18", say=quiet
    )
    m = report.write(board, logs, say=quiet).model
    rows = [r for g in m["lmbench_groups"]["groups"] for r in g["rows"] if r["bench"] == "lat_pagefault"]
    assert len(rows) == 1
    (row,) = rows
    assert row["name"] == "Pagefaults on /tmp/lmb.file"
    assert [c["value"] for c in row["cells"]] == [0.61, 0.7, 2.0]  # frodo 2.4.18's Page Fault: "2.00000"


# --- held-out kinds: a PowerPC boot log and a RISC-V lmbench summary (tests/data/real, session 15)


def test_powerpc_boot_log_and_riscv_summary_import_and_the_page_says_not_tested(logs, board):  # noqa: F811
    """uboot-4.19-ppc-mpc5121 (read by hand): line 12 "Linux version 4.19.0-00023-g1077d91e4c12-dirty
    (smeik@smeik) (gcc", lines 49-50 "Memory: 251224K/262144K available (6192K kernel code, 284K
    rwdata," / "1184K rodata, ...": kernel code + data 6192 + 284 + 1184 = 7660 kB of 256 MB; line 233
    "Freeing unused kernel memory: 200K"; no printk times.  lmbench3-summary-riscv64-openeuler: line 53
    "openEuler Linux 6.1.0-0 8.3700 ..." (2p/0K ctxsw, us)."""
    log = BOOT / "uboot-4.19-ppc-mpc5121-nfsroot-mail-wrapped-no-banner.log"
    summary = LMB / "lmbench3-summary-riscv64-openeuler-6.1-make-see-basic-params.txt"
    importer.import_bootlog(board, logs, log, "4.19-mpc5121", root="nfs", say=quiet)
    importer.import_lmbench(board, logs, summary, "6.1-rv64", say=quiet)
    fp = records.read(logs / BOARD / "4.19-mpc5121" / "footprint.json", records.Footprint)
    assert (fp.kernel_code_data_kb, fp.memory_mb) == (7660, 256)
    assert fp.kernelrelease == "4.19.0-00023-g1077d91e4c12-dirty"
    lm = records.read(logs / BOARD / "6.1-rv64" / "lmbench.json", records.Lmbench)
    assert lm.imported is not None and lm.imported.format == "lmbench 3.0 summary"
    rep = report.write(board, logs, say=quiet)
    m = rep.model
    assert m["kernels"] == ["5.10", "6.12", "4.19-mpc5121", "6.1-rv64"]
    nfs = {r["name"]: r for r in m["boot_nfs"]["rows"]}
    cell = next(c for c in nfs["freeing_init"]["cells"] if c and c["kernel"] == "4.19-mpc5121")
    assert (cell["text"], cell["link"]) == ("reached", "../4.19-mpc5121/imported-bootlog/console.log#L233")
    rows = {r["name"]: r for g in m["lmbench_groups"]["groups"] for r in g["rows"]}
    ctx = rows["ctx 2p/0K"]["cells"][m["lmbench_groups"]["kernels"].index("6.1-rv64")]
    assert (ctx["value"], ctx["link"]) == (8.37, "../6.1-rv64/imported-lmbench/lmbench.txt#L53")
    claims = {
        x["kernel"]: [it["claim"] for _, its in x["sections"] for it in its]
        for x in m["findings"]
        if x["kernel"] in ("4.19-mpc5121", "6.1-rv64")
    }
    assert any(c.startswith("kernel code + data: 1144 → 7660 kB") for c in claims["4.19-mpc5121"])
    assert any(c.startswith("Context switching: ") for c in claims["6.1-rv64"])
    for claim in claims["4.19-mpc5121"][1:] + claims["6.1-rv64"][1:]:  # after "where it came from"
        assert claim.endswith("(imported, not tested)"), claim
        assert not re.search(r"slower|faster|significant|larger|smaller", claim), claim
    for text in (rep.index.read_text(), rep.markdown.read_text()):
        assert "imported, not tested" in text
        assert "4.19-mpc5121 (imported)" in text or '<th>4.19-mpc5121 <span class="imp-mark"' in text


def test_a_boot_log_without_a_memory_line_says_so_in_one_line(tmp_path, board):
    """uboot-6.18-rc1-ppc64-e5500: the excerpt ends (line 96 "...") before mem_init: its milestones
    (kernel load line 23, Linux version line 45) are imported, no footprint.json, and one line says why."""
    log = BOOT / "uboot-6.18-rc1-ppc64-e5500-qemu-no-banner-wrapped-version-elided.log"
    said: list[str] = []
    importer.import_bootlog(board, tmp_path, log, "6.18-e5500", say=said.append)
    kdir = tmp_path / BOARD / "6.18-e5500"
    assert files_under(kdir) == ["boot-timing.json", "imported-bootlog/console.log"]
    assert said[-1] == f"import: {log}: no Memory: line (no footprint.json)"
    assert sum("Memory:" in s for s in said) == 1
