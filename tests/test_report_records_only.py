"""The report reads records only: the machine and versions it shows are those each
measurement stored when it ran, the symbol and .config diffs are made once per pair
of build keys and read back from their record, and the workloads' "not in this
study" comes from the workload records.  Rendered again from a copy of logs/ with
no process allowed (no QEMU, no git), the artifacts gone and configs/workloads/
away, the page is the same.  (tests/integration/test_qemu_arm.py does the same on
real records.)"""

import json
import re
import shutil
import subprocess

import pytest

import recordfactory as rf
from bringup import records
from bringup.measure.workloads import available
from bringup.model import workload as wm
from bringup.model.board import load_board
from bringup.parse import sizediff
from bringup.report import page as report
from bringup.report import sizediffs
from test_compare import V1, V2, elf

ENV = {
    "host": "Linux 9.9.9-test x86_64",
    "cpu": "Measuring CPU 3000 @ 1.00GHz",
    "cpus": 16,
    "qemu": "QEMU emulator version 7.2.99 (recorded)",
    "python": "3.11.0",
    "bringup": "abc1234",
}
BOOT = {"5.10": [0.70, 0.71, 0.70, 0.72, 0.71], "6.12": [0.80, 0.79, 0.81, 0.80, 0.80]}


def write_logs(logs, tmp_path, environment=ENV):
    d = logs / "qemu-arm"
    for k, src in (("5.10", V1), ("6.12", V2)):
        (d / k / "images").mkdir(parents=True)
        shutil.copy(elf(tmp_path, f"vmlinux-{k}", src), d / k / "images" / "vmlinux")
        (d / k / "images" / "config").write_text(f"CONFIG_A=y\nCONFIG_ONLY_{k.replace('.', '_')}=y\n")
        records.write(
            d / k / "build.json", rf.build(k, artifacts={"vmlinux": "images/vmlinux", "config": "images/config"})
        )
        extra = {"environment": environment} if environment else {}
        records.write(d / k / "footprint.json", rf.footprint(k, **extra))
        records.write(d / k / "workloads.json", rf.workloads(k, available=available(), **extra))
    kernels = {
        k: rf.kernel_timing({"login": rf.milestone_stats('"login:" prompt', v)}, [f"r{k}-{i}" for i in range(5)])
        for k, v in BOOT.items()
    }
    extra = {"environment": environment} if environment else {}
    records.write(d / "boot-timing.json", rf.boot_timing(kernels=kernels, **extra))


def pages(logs) -> tuple[str, str]:
    rep = report.write(load_board("qemu-arm"), logs, say=lambda *_: None)
    html, md = rep.index.read_text(), rep.markdown.read_text()
    return tuple(re.sub(r"Generated \S+", "Generated <time>", p) for p in (html, md))  # type: ignore[return-value]


def forbid(*_, **__):
    raise AssertionError("the report ran a process: it reads records only")


def test_a_copy_of_logs_renders_the_same_page_without_qemu_git_configs_or_artifacts(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    write_logs(logs, tmp_path)
    html, md = pages(logs)
    assert ENV["cpu"] in html and ENV["qemu"] in html and "abc1234, Python 3.11.0" in html
    assert "measured on: Linux 9.9.9-test x86_64, Measuring CPU 3000 @ 1.00GHz, 16 CPUs" in md
    assert "not recorded" not in md
    assert "CONFIG_ONLY_6_12" in md  # the .config diff
    stored = list((logs / "qemu-arm" / sizediffs.DIRECTORY).glob("*.json"))
    assert len(stored) == 1 and records.read(stored[0], records.SizeDiff).symbols is not None

    copy = tmp_path / "elsewhere" / "logs"
    shutil.copytree(logs, copy)
    shutil.rmtree(copy / "qemu-arm" / "report")
    for k in ("5.10", "6.12"):
        shutil.rmtree(copy / "qemu-arm" / k / "images")  # the size diffs come from their record
    monkeypatch.setattr(subprocess, "run", forbid)
    monkeypatch.setattr(subprocess, "Popen", forbid)
    monkeypatch.setattr(shutil, "which", forbid)
    monkeypatch.setattr(wm, "workloads_dir", lambda: tmp_path / "configs-removed")
    monkeypatch.setattr(sizediff, "symbols", forbid)
    assert pages(copy) == (html, md)


def test_records_without_an_environment_say_not_recorded(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, tmp_path, environment=None)
    model = report.collect(load_board("qemu-arm"), logs)
    assert model["env"]["environments"] == []
    assert model["env"]["not_recorded"] == [
        "boot-timing.json",
        "5.10/footprint.json",
        "6.12/footprint.json",
        "5.10/workloads.json",
        "6.12/workloads.json",
    ]
    _, md = pages(logs)
    assert "- machine: not recorded (boot-timing.json, 5.10/footprint.json," in md


def test_measurements_on_two_machines_are_shown_apart(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, tmp_path)
    f = logs / "qemu-arm" / "6.12" / "footprint.json"
    rec = json.loads(f.read_text())
    rec["environment"] = {**ENV, "cpu": "Other CPU"}
    f.write_text(json.dumps(rec))
    envs = report.collect(load_board("qemu-arm"), logs)["env"]["environments"]
    assert [e["records"] for e in envs] == [
        ["boot-timing.json", "5.10/footprint.json", "5.10/workloads.json", "6.12/workloads.json"],
        ["6.12/footprint.json"],
    ]
    assert envs[1]["machine"].endswith("Other CPU, 16 CPUs")


def test_a_size_diff_is_made_once_per_pair_of_keys_and_again_for_new_keys(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    write_logs(logs, tmp_path)
    board = load_board("qemu-arm")
    first = report.collect(board, logs)["sizediff"]
    calls = []
    real = sizediff.symbols
    monkeypatch.setattr(sizediff, "symbols", lambda f: calls.append(f) or real(f))
    assert report.collect(board, logs)["sizediff"] == first and calls == []
    f = logs / "qemu-arm" / "6.12" / "build.json"  # a rebuild with another key: diffed afresh
    records.write(
        f, rf.build("6.12", key=rf.key("rebuilt"), artifacts={"vmlinux": "images/vmlinux", "config": "images/config"})
    )
    report.collect(board, logs)
    assert len(calls) == 2
    assert len(list((logs / "qemu-arm" / sizediffs.DIRECTORY).glob("*.json"))) == 2


def test_a_damaged_size_diff_record_is_made_again(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, tmp_path)
    board = load_board("qemu-arm")
    first = report.collect(board, logs)["sizediff"]
    (stored,) = (logs / "qemu-arm" / sizediffs.DIRECTORY).glob("*.json")
    stored.write_text("{not json")
    assert report.collect(board, logs)["sizediff"] == first
    assert records.read(stored, records.SizeDiff).config is not None


@pytest.mark.parametrize("cpuinfo, want", [("model name\t: Some CPU\n", "Some CPU"), ("processor : 0\n", "unknown")])
def test_cpu_model_from_cpuinfo(tmp_path, cpuinfo, want):
    from bringup.util import environment

    f = tmp_path / "cpuinfo"
    f.write_text(cpuinfo)
    assert environment.cpu_model(f) == want
    assert environment.cpu_model(tmp_path / "missing") == "unknown"
