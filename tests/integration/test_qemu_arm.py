"""Integration: build the qemu-arm kernels (5.10 and 6.12 from Debian's
sources, tinyconfig-based) with the real cross toolchain, and boot them in
real QEMU, directly and through real U-Boot + TFTP.

Each test takes what it needs from conftest.py's session fixtures (arm_built,
arm_boot, arm_footprint), not from the tests above it, so each runs alone."""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time

import pytest

from bringup import records

from .conftest import ARM_KERNELS as KERNELS
from .conftest import ROOT, bringup

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("kernel_id", KERNELS)
def test_build_record_matches_size_and_ls(arm_built, kernel_id):
    recdir = arm_built["logs"] / "qemu-arm" / kernel_id
    rec = json.loads((recdir / "build.json").read_text())
    assert rec["status"] == "ok" and rec["schema"] == "bringup.build/4"
    assert rec["kernelrelease"].startswith(kernel_id + ".")
    vm = recdir / rec["artifacts"]["vmlinux"]
    out = (
        subprocess.run(["arm-linux-gnueabihf-size", str(vm)], capture_output=True, text=True, check=True)
        .stdout.splitlines()[1]
        .split()
    )
    text, data, bss, dec = (int(x) for x in out[:4])
    assert rec["sizes"]["berkeley"] == {"text": text, "data": data, "bss": bss, "dec": dec}
    z = recdir / rec["artifacts"]["zImage"]
    assert rec["sizes"]["compressed_image"] == {"file": "zImage", "bytes": os.stat(z).st_size}
    u = recdir / rec["artifacts"]["uImage"]
    assert rec["sizes"]["uimage"]["bytes"] == os.stat(u).st_size == os.stat(z).st_size + 64
    assert rec["sizes"]["sections"][".text"] > 500_000
    assert rec["config"]["dropped"] == [], "every fragment symbol must survive olddefconfig"
    assert rec["time"]["real"] > 0 and rec["time"]["user"] > 0
    cfg = (recdir / rec["artifacts"]["config"]).read_text()
    for sym in (
        "CONFIG_PRINTK_TIME=y",
        "CONFIG_SERIAL_AMBA_PL011_CONSOLE=y",
        "CONFIG_ROOT_NFS=y",
        "CONFIG_MMU=y",
        "CONFIG_BLK_DEV_INITRD=y",
    ):
        assert sym in cfg


def test_second_build_all_rebuilds_nothing(arm_built):
    t = time.monotonic()
    p = bringup(arm_built, "build-all", "--board", "qemu-arm")
    took = time.monotonic() - t
    assert p.returncode == 0
    assert p.stderr.count("up to date") == 2
    assert took < 30


def test_forced_build_runs_the_cross_compiler_and_reproduces_the_image(arm_built, tmp_path):
    """arm_built may have come from the cache's result store (a build of the same key in
    another logs dir); FORCE runs make with the real cross toolchain again, and the same
    key gives the same image (the build's fixed timestamp, user and host)."""
    env = dict(arm_built["env"], BRINGUP_LOGS=str(tmp_path))
    p = subprocess.run(
        [sys.executable, "-m", "bringup", "build-all", "--board", "qemu-arm", "--kernel", "5.10", "--force"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    stored = json.loads((arm_built["logs"] / "qemu-arm" / "5.10" / "build.json").read_text())
    forced = json.loads((tmp_path / "qemu-arm" / "5.10" / "build.json").read_text())
    assert forced["key"] == stored["key"]
    assert forced["started"] > stored["started"]
    log = (tmp_path / "qemu-arm" / "5.10" / "build.log").read_text()
    assert re.search(r"^\s+CC\s+init/main\.o$", log, re.M), "make must have compiled"
    assert forced["sizes"]["berkeley"] == stored["sizes"]["berkeley"]
    assert forced["sizes"]["compressed_image"] == stored["sizes"]["compressed_image"]


def test_build_report_has_deltas(arm_built):
    p = bringup(arm_built, "build-report", "--board", "qemu-arm")
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    head = next(line for line in lines if line.startswith("|") and "Delta" in line)
    assert "5.10" in head and "6.12" in head
    rows = {line.split("|")[1].strip(): line for line in lines if line.startswith("| ")}
    for label in ("real", "user", "sys", "Compressed kernel", "Uncompressed kernel", "text", "data", "bss"):
        assert label in rows and "%" in rows[label]


@pytest.mark.parametrize("path", ["direct", "u-boot"])
def test_boot_to_login(arm_boot, path):
    booted = arm_boot(path)
    p, summary = booted["proc"], booted["summary"]
    assert p.returncode == 0, p.stderr[-3000:]
    assert summary["path"] == path
    for kernel_id in KERNELS:
        k = summary["kernels"][kernel_id]
        assert k["ok"] == 1 and k["failed"] == 0
        m = k["milestones"]
        for name in ("linux_version", "console_enabled", "freeing_init", "run_init", "userspace", "login"):
            assert name in m, name
        assert (
            m["linux_version"]["host"]["median"]
            < m["freeing_init"]["host"]["median"]
            < m["userspace"]["host"]["median"]
            <= m["login"]["host"]["median"]
            < 60
        )
        if path == "u-boot":
            assert "bootloader" in m and "starting_kernel" in m and k["reference"] == "kernel_load"
        [run] = booted["runs"][kernel_id]
        assert run.name.endswith(f"-{path}-r01")
        boot = json.loads((run / "boot.json").read_text())
        # printk time and host time agree: the kernel's own interval matches the host's
        fi, us = boot["milestones"]["freeing_init"], boot["milestones"]["userspace"]
        assert abs((us["host_s"] - fi["host_s"]) - (us["printk_s"] - fi["printk_s"])) < 0.05
        assert boot["printk_lag_ms"]["median"] < 20
    assert "Linux version" in p.stdout and "Delta" in p.stdout


def test_qemu_killed_mid_run_fails_clearly_and_keeps_earlier_summary(arm_built, arm_boot):
    logs = arm_built["logs"] / "qemu-arm"
    good = logs / "boot-timing.json"
    p = arm_boot("u-boot")["proc"]  # the earlier good summary
    assert p.returncode == 0, p.stderr[-3000:]
    before = good.read_bytes()
    old_runs = set((logs / "6.12" / "boot").glob("*"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bringup",
            "boot-timing",
            "--board",
            "qemu-arm",
            "--kernel",
            "6.12",
            "--runs",
            "1",
            "--path",
            "u-boot",
        ],
        env=arm_built["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not killed:
        for run in set((logs / "6.12" / "boot").glob("*")) - old_runs:
            log = run / "console.log"
            if log.exists() and "Starting kernel" in log.read_text(errors="replace"):
                tftp = str(log.parent / "tftp")
                r = subprocess.run(["pkill", "-9", "-f", f"tftp={tftp}"])
                killed = r.returncode == 0
                break
        time.sleep(0.01)
    out, err = proc.communicate(timeout=120)
    assert killed, "did not catch QEMU mid-boot"
    assert proc.returncode == 4
    assert "QEMU exited (killed by signal 9)" in err
    assert good.read_bytes() == before, "a failed run must not replace the good summary"
    failed = json.loads((logs / "boot-timing-failed.json").read_text())
    assert failed["kernels"]["6.12"]["failed"] == 1


def test_footprint_quick(arm_built, arm_footprint):
    """Boot the qemu-arm ramdisk, eat memory, run the quick lmbench set (real lmbench)."""
    p = arm_footprint
    assert p.returncode == 0, p.stderr[-3000:]
    import tomllib

    quick = [
        b["name"]
        for b in tomllib.loads((ROOT / "configs" / "lmbench.toml").read_text())["bench"]
        if b.get("quick", True)
    ]
    for kernel_id in KERNELS:
        d = arm_built["logs"] / "qemu-arm" / kernel_id
        footprint_record = json.loads((d / "footprint.json").read_text())
        assert 0 < footprint_record["malloc_kb"] < 512 * 1024
        assert footprint_record["malloc_kb"] < footprint_record["total_free_kb"] <= 512 * 1024
        assert 0 < footprint_record["kernel_code_data_kb"] < 20 * 1024
        assert footprint_record["memory_line"]["wording"] == "modern"
        # the records say where their lines are: the Memory: line in console.log, each lmbench block in lmbench.txt
        rec = records.read(d / "footprint.json", records.Footprint)
        assert rec.memory_line is not None and rec.memory_line.line and rec.run
        console = (d / rec.run / "console.log").read_text().splitlines()
        assert rec.memory_line.text in console[rec.memory_line.line - 1]
        lmr = records.read(d / "lmbench.json", records.Lmbench)
        assert lmr.run == rec.run
        raw = (d / lmr.run / "lmbench.txt").read_text().split("\n")
        for name, b in lmr.benchmarks.items():
            assert b.raw_lines, name
            assert all(raw[n - 1].strip().startswith(f"@@@ BEGIN {name} @@@") for n in b.raw_lines), name
        lmbench_record = json.loads((d / "lmbench.json").read_text())
        assert lmbench_record["measured"] is True
        missing = [n for n in quick if not lmbench_record["benchmarks"].get(n, {}).get("metrics")]
        assert missing == [], f"{kernel_id}: quick benchmarks without a number: {missing}"
    assert "Available for malloc()" in p.stdout and "Context switching:" in p.stdout


def test_report_from_real_records_renders_in_a_browser(arm_built, arm_boot, arm_footprint, tmp_path):
    """The page from real records: the builds, a boot over U-Boot (or whichever boot
    wrote boot-timing.json last in this session) and the footprint with lmbench."""
    from browser import open_page

    d = arm_built["logs"] / "qemu-arm"
    for what, p in (("boot-timing", arm_boot("u-boot")["proc"]), ("footprint-report", arm_footprint)):
        assert p.returncode == 0, f"{what}: {p.stderr[-3000:]}"
    p = bringup(arm_built, "report", "--board", "qemu-arm", timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    index = d / "report" / "index.html"
    assert p.stdout.strip() == str(index.resolve())
    model = json.loads((d / "report" / "model.json").read_text())
    assert model["kernels"] == KERNELS and model["left_out"] == []
    assert all(c["value"] > 0 for r in model["build_table"][:8] for c in r["cells"])
    assert {r["name"] for r in model["boot_rows"]} >= {"freeing_init", "login"}
    assert all(c and c["median"] > 0 for r in model["boot_rows"] for c in r["cells"])
    assert all(c["value"] > 0 for r in model["footprint_rows"] for c in r["cells"])
    assert len(model["lmbench_groups"]["groups"]) == 6
    assert set(model["bw_mem"]) == {"rd", "wr", "bcopy"}
    sd = model["sizediff"][0]
    assert sd["symbols"]["grown_rows"] and sd["config"]["added"]
    sections = [t for f in model["findings"] for t, _ in f["sections"]]
    # "Boot, root over NFS" too when test_nfs_root.py ran first, and "Boot time explained" when
    # an initcall boot (test_initcalls_qemu.py) did: 6.12's initcalls differ from 5.10's by far more
    # than the A/A floor (populate_rootfs, pty_init: hundreds of ms), which the instruction clock's
    # rule claims
    later = ("Boot, root over NFS", "Boot time explained")
    assert [s for s in sections if s not in later] == ["Build", "Boot", "Footprint", "lmbench"]
    if (d / "boot-timing-nfs.json").exists():
        assert "Boot, root over NFS" in sections and model["boot_nfs"]["rows"]
    explained = [it for f in model["findings"] for t, items in f["sections"] if t == later[1] for it in items]
    assert (d / "boot-timing-initcalls.json").exists() or not explained
    # each claim says the rule that decided it: on the instruction clock (this board's) the A/A
    # floor's (stats/deterministic.py), on the host clock the study's test after the correction
    rules = {p["rule"] for p in (model.get("boot_explained") or {}).get("pairs", []) if p["claim"]}
    words = {"floor": "the A/A floor", "test": "after Benjamini-Hochberg"}
    assert all(it["significant"] and any(words[r] in it["claim"] for r in rules) for it in explained), explained
    if explained and (d / "boot-timing-initcalls.json").exists():
        assert rules == {"floor"}, rules  # qemu-arm measures on the instruction clock
    res = open_page(index, tmp_path)
    assert res["console"] == [], res["console"]
    # the build, footprint and bandwidth charts, plus one per kernel when an initcall
    # boot (test_initcalls_qemu.py) wrote its record earlier in the session
    n = index.read_text().count("data-chart=")
    assert n >= 3 and f'data-charts-rendered="{n}/{n}"' in res["dom"], re.findall(
        r'data-charts-rendered="[^"]*"', res["dom"]
    )


def _special_files(folder: str, names: list[str]) -> list[str]:
    """copytree's ignore: device nodes, FIFOs and sockets (not records, never read by a report)."""
    kinds = (stat.S_ISCHR, stat.S_ISBLK, stat.S_ISFIFO, stat.S_ISSOCK)
    return [n for n in names if any(k(os.lstat(os.path.join(folder, n)).st_mode) for k in kinds)]


def test_report_of_a_copy_of_logs_elsewhere_is_the_same_page(arm_built, arm_boot, arm_footprint, tmp_path):
    """The report reads records only: rendered again from a copy of logs/ by a copy of
    bringup at another git HEAD, with configs/workloads/ removed, the kernels' vmlinux and
    .config gone from the copy and nothing but Python on PATH (no QEMU, no git), the page
    is the same, and its Environment section is the machine that measured."""
    for what, p in (("boot-timing", arm_boot("u-boot")["proc"]), ("footprint-report", arm_footprint)):
        assert p.returncode == 0, f"{what}: {p.stderr[-3000:]}"
    p = bringup(arm_built, "report", "--board", "qemu-arm", timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    logs = arm_built["logs"]
    copy_logs = tmp_path / "logs"
    # an NFS root's export holds device nodes (dev/zero, dev/tty): copying those would read them forever
    shutil.copytree(logs / "qemu-arm", copy_logs / "qemu-arm", symlinks=True, ignore=_special_files)
    if (logs / "qemu-arm-aa" / "aa.json").exists():  # test_aa ran first: its A/A spread raises the floors
        (copy_logs / "qemu-arm-aa").mkdir()
        shutil.copy2(logs / "qemu-arm-aa" / "aa.json", copy_logs / "qemu-arm-aa" / "aa.json")
    shutil.rmtree(copy_logs / "qemu-arm" / "report")
    for kernel_id in KERNELS:
        for name in ("vmlinux", "config"):
            rel = records.read(logs / "qemu-arm" / kernel_id / "build.json", records.Build).artifacts[name]
            (copy_logs / "qemu-arm" / kernel_id / rel).unlink()
    # bringup elsewhere: its tracked files in a repository of their own (another HEAD), no workloads
    tree = tmp_path / "bringup"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        if (ROOT / rel).is_file() and not rel.startswith("configs/workloads/"):
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, tree / rel)
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "elsewhere"], check=True)
    env = {
        **arm_built["env"],
        "BRINGUP_LOGS": str(copy_logs),
        "PYTHONPATH": str(tree / "scripts" / "lib"),
        "PATH": os.path.dirname(sys.executable),
    }
    assert not shutil.which("git", path=env["PATH"]) and not shutil.which("qemu-system-arm", path=env["PATH"])
    q = subprocess.run(
        [sys.executable, "-m", "bringup", "report", "--board", "qemu-arm"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert q.returncode == 0, q.stderr[-3000:]
    assert q.stdout.strip() == str((copy_logs / "qemu-arm" / "report" / "index.html").resolve())

    def page(d, name):
        return re.sub(r"Generated \S+", "Generated <time>", (d / "qemu-arm" / "report" / name).read_text())

    for name in ("index.html", "report.md"):
        assert page(copy_logs, name) == page(logs, name), name
    md = page(logs, "report.md")
    assert "not recorded" not in md and "- QEMU: QEMU emulator version" in md
    assert "- measured on: Linux " in md and "CONFIG_" in md  # the environment and the .config diff
