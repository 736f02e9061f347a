"""Records for tests, built through the record models: a fixture can only hold
fields the writers write, with the types they write.  Each function starts
from a complete record like the writer makes and deep-merges the overrides
(a dict merges into a table, anything else replaces; the tables named in
`replace` are replaced whole: a build's artifacts, lmbench's benchmarks, ...)."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from bringup import records, stats

T0 = "2026-01-01T00:00:00+00:00"
# a record's `clock` as a run on the instruction clock writes it (shift 3: qemu-arm's); without
# it a factory's record has the model's default, the host clock
INSTRUCTIONS = {"kind": "instructions", "shift": 3, "ns_per_instruction": 8, "seed": None}


def key(text: str) -> str:
    """A readable stand-in for a content key: the sha256 of text."""
    return hashlib.sha256(text.encode()).hexdigest()


def merge(base: dict[str, Any], over: dict[str, Any], replace: tuple[str, ...] = ()) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in replace:
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def build(kernel: str = "5.10", board: str = "qemu-arm", **over: Any) -> records.Build:
    text, data, bss, comp = 2_000_000, 850_000, 220_000, 1_600_000
    base = {
        "status": "ok",
        "board": board,
        "kernel": kernel,
        "description": f"Linux {kernel}",
        "key": key(f"{board}/{kernel}"),
        "started": T0,
        "finished": T0,
        "kernelrelease": f"{kernel}.1",
        "version": f"{kernel}.1",
        "era": "2.6+",
        "arch": "arm",
        "kernel_arch": "arm",
        "source": {
            "kind": "debian",
            "package": f"linux-source-{kernel}",
            "suite": "bookworm",
            "package_version": "1",
            "tree": f"/cache/src/linux-source-{kernel}",
        },
        "toolchain": {
            "cross_compile": "arm-linux-gnueabihf-",
            "gcc": "/usr/bin/arm-linux-gnueabihf-gcc",
            "version": "arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0",
            "ccache": True,
        },
        "config": {
            "defconfig": "tinyconfig",
            "config_file": "",
            "fragments": [],
            "sha256": key("config"),
            "dropped": [],
        },
        "time": {"real": 100.0, "user": 160.0, "sys": 25.0, "clock": "monotonic", "steps": []},
        "jobs": 2,
        "ccache": {"hits": 0, "misses": 100, "hit_rate": 0.0},
        "sizes": {
            "sections": {".text": text, ".data": data, ".bss": bss},
            "groups": {"text": text, "data": data, "bss": bss},
            "berkeley": {"text": text, "data": data, "bss": bss, "dec": text + data + bss},
            "vmlinux_bytes": 4_000_000,
            "compressed_image": {"file": "zImage", "bytes": comp},
            "boot_image": {"file": "zImage", "bytes": comp},
            "uncompressed_image": {"file": "Image", "bytes": comp * 3},
            "uimage": None,
        },
        "warnings": 0,
        "errors": 0,
        "artifacts": {"vmlinux": "images/vmlinux", "config": "images/config", "zImage": "images/zImage"},
        "commands": [],
        "reproduce": f"scripts/bringup build-all --board {board} --kernel {kernel} --force",
        "build_dir": f"/cache/build/{board}/{kernel}",
        "log": "build.log",
        "host": {"nproc": 2, "bringup_root": "/src/bringup"},
    }
    return records.validate(merge(base, over, ("artifacts",)), records.Build, "recordfactory.build")


def boot_run(kernel: str = "5.10", board: str = "qemu-arm", **over: Any) -> records.Boot:
    base = {
        "board": board,
        "kernel": kernel,
        "run_id": "run",
        "run_index": 1,
        "status": "ok",
        "error": None,
        "path": "u-boot",
        "root": "ramdisk",
        "started": T0,
        "finished": T0,
        "kernelrelease": f"{kernel}.1",
        "build_key": key(f"{board}/{kernel}"),
        "initrd": "/logs/rootfs/initramfs.cpio.gz",
        "cmdline": "console=ttyAMA0",
        "t0": "QEMU spawn",
        "log": "console.log",
        "raw": "console.raw",
        "milestones": {},
        "intervals": [],
        "missing": [],
        "fault": None,
        "clock_zero_host_s": None,
        "hidden_at_zero_s": None,
        "printk_lag_ms": None,
    }
    return records.validate(merge(base, over, ("milestones",)), records.Boot, "recordfactory.boot_run")


def milestone_stats(label: str, values: list[float]) -> dict[str, Any]:
    return {"label": label, "host": stats.summarize(values), "printk": None, "values": values}


def kernel_timing(milestones: dict[str, Any], run_ids: list[str], build_key: str | None = None) -> dict[str, Any]:
    n = len(run_ids)
    return {
        "runs": n,
        "ok": n,
        "failed": 0,
        "reference": "kernel_load",
        "kernelrelease": None,
        "build_key": build_key,
        "milestones": milestones,
        "hidden_at_zero_s": None,
        "printk_lag_ms": None,
        "failures": [],
        "run_ids": run_ids,
    }


def rootfs_ref(name: str = "initramfs", inputs_key: str | None = None) -> dict[str, Any]:
    return {"file": f"{name}.cpio.gz", "sha256": key(name), "inputs_key": inputs_key}


def rootfs(name: str = "footprint", board: str = "qemu-arm", **extra: Any) -> records.Rootfs:
    """A ramdisk's record as rootfs.build returns it (a step's tests replace the build)."""
    return records.Rootfs(
        board=board,
        name=name,
        file=f"{name}.cpio.gz",
        bytes=1,
        sha256=key("rd"),
        archive_sha256=key("archive"),
        inputs_key=key("inputs"),
        userspace_arch="armhf",
        libc="glibc",
        busybox={"source": "debian", "version": "1"},
        ext2=None,
        files=[],
        extra=extra,
    )


def boot_timing(board: str = "qemu-arm", **over: Any) -> records.BootTiming:
    base = {
        "board": board,
        "created": T0,
        "path": "u-boot",
        "root": "ramdisk",
        "runs_requested": 5,
        "rootfs": rootfs_ref(),
        "kernels": {},
    }
    return records.validate(merge(base, over, ("kernels",)), records.BootTiming, "recordfactory.boot_timing")


def footprint(kernel: str = "5.10", board: str = "qemu-arm", **over: Any) -> records.Footprint:
    code, free, malloc = 2856, 514876, 490496
    line = f"Memory: 505660K/524288K available ({code - 1000}K kernel code, 500K rwdata, 500K rodata, 1024K init)"
    base = {
        "board": board,
        "kernel": kernel,
        "kernelrelease": f"{kernel}.1",
        "build_key": key(f"{board}/{kernel}"),
        "created": T0,
        "run": "footprint-runs/20260101T000000Z",
        "memory_mb": 512,
        "memory_line": {
            "wording": "modern",
            "line": 42,
            "text": line,
            "available_kb": 505660,
            "total_kb": 524288,
            "kernel_code_kb": code - 1000,
            "data_kb": 1000,
            "init_kb": 1024,
            "bss_kb": None,
            "reserved_kb": None,
            "parts_kb": {"kernel code": code - 1000, "rwdata": 500, "rodata": 500, "init": 1024},
            "kernel_code_data_kb": code,
        },
        "free": {"total_kb": free, "used_kb": 9876, "free_kb": 480000, "available_kb": 481000, "columns": {}},
        "meminfo": {"MemTotal": free},
        "mem_eat": {"bytes": malloc * 1024, "kb": malloc, "completed": True},
        "kernel_code_data_kb": code,
        "total_free_kb": free,
        "malloc_kb": malloc,
        "rootfs": rootfs_ref("footprint"),
    }
    return records.validate(merge(base, over), records.Footprint, "recordfactory.footprint")


def metric(name: str, value: float, unit: str = "us", values: list[float] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "better": "higher" if unit == "MB/s" else "lower",
        "source": name,
        "values": values,
    }


def lmbench(kernel: str = "5.10", board: str = "qemu-arm", **over: Any) -> records.Lmbench:
    base = {
        "board": board,
        "kernel": kernel,
        "created": T0,
        "build_key": key(f"{board}/{kernel}"),
        "mode": "quick",
        "source": {"lmbench": "debian bookworm lmbench:armhf 3.0-a9+debian.1-5", "libraries": ["libc6:armhf"]},
        "run": "footprint-runs/20260101T000000Z",
        "measured": True,
        "reason": None,
        "runs": 1,
        "retried": [],
        "benchmarks": {},
    }
    return records.validate(merge(base, over, ("benchmarks",)), records.Lmbench, "recordfactory.lmbench")


def not_measured(kernel: str, reason: str, **over: Any) -> records.Lmbench:
    return lmbench(kernel, measured=False, reason=reason, runs=0, benchmarks={}, **over)


def workloads(kernel: str = "5.10", board: str = "qemu-arm", **over: Any) -> records.Workloads:
    """A workloads.json with one measured workload (openssl's sha256), 3 rounds."""
    base = {
        "board": board,
        "kernel": kernel,
        "created": T0,
        "build_key": key(f"build-{kernel}"),
        "mode": "quick",
        "runs": 3,
        "run_dirs": ["workload-runs/r01", "workload-runs/r02", "workload-runs/r03"],
        "rootfs": rootfs_ref("workloads"),
        "packages": {"openssl": "3.0.20-1~deb12u2"},
        "host": [],
        "disturbed": 0,
        "workloads": {
            "openssl": {
                "description": "OpenSSL speed",
                "packages": ["openssl"],
                "measured": True,
                "reason": None,
                "metrics": [
                    {
                        "name": "sha256",
                        "unit": "kB/s",
                        "better": "higher",
                        "value": 40895.11,
                        "values": [40000.0, 40895.11, 41000.0],
                        "rounds": [1, 2, 3],
                    }
                ],
                "failures": [],
                "seconds": [4.3, 4.3, 4.4],
            }
        },
    }
    return records.validate(merge(base, over, ("workloads",)), records.Workloads, "recordfactory.workloads")
