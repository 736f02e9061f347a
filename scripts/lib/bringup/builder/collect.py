"""The build record of a good build: its artifacts (the files a later step boots or
reads), their sizes, the times of its make steps and what the log and the tree say
(kernelrelease, warnings, the .config).  builder/kernel.py calls collect() once make
has finished; nothing is published here."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bringup import records
from bringup.builder.ccache import _ccache_stats
from bringup.builder.context import Ctx, _env
from bringup.builder.erafixes import fix_record
from bringup.builder.make import kbuild_commands, make_argv
from bringup.errors import BuildFailed
from bringup.parse import elfsize
from bringup.util import clock


def out_dir(ctx: Ctx) -> Path:
    """Where make's output is: the O= directory, or the tree of an in-tree era."""
    return ctx.builddir if ctx.kernel.era.out_of_tree else ctx.tree


def dot_config(ctx: Ctx) -> Path:
    return out_dir(ctx) / ".config"


def kernelrelease(ctx: Ctx) -> str:
    f = out_dir(ctx) / "include" / "config" / "kernel.release"
    if f.exists():
        return f.read_text().strip()
    p = subprocess.run(make_argv(ctx, ["-s", "kernelrelease"]), capture_output=True, text=True, env=_env(ctx))
    lines = [line for line in p.stdout.splitlines() if line.strip() and not line.startswith("make")]
    return lines[-1].strip() if lines else ctx.src.version


@dataclass
class Images:
    """The files of a good build, by artifact name, and the images the sizes name."""

    artifacts: dict[str, Path]
    compressed: Path
    boot: Path
    raw: Path | None  # the uncompressed image, when the architecture makes one


def _images(ctx: Ctx) -> Images:
    """The artifacts make left in the output directory; BuildFailed when one is missing."""
    k, b, out = ctx.kernel, ctx.board, out_dir(ctx)
    vmlinux = out / "vmlinux"
    if not vmlinux.exists():
        raise BuildFailed(f"build of {b.name}/{k.id}: make succeeded but {vmlinux} is missing")
    artifacts = {"vmlinux": vmlinux, "config": dot_config(ctx)}
    if (out / "System.map").exists():
        artifacts["System.map"] = out / "System.map"
    boot_target = b.image.target if b.image.target in k.arch.images else k.arch.compressed_image
    comp = out / k.arch.images[k.arch.compressed_image]
    boot = out / k.arch.images[boot_target]
    for f, what in ((comp, "compressed image"), (boot, "boot image")):
        if not f.exists():
            raise BuildFailed(f"build of {b.name}/{k.id}: the {what} {f} is missing after make")
    artifacts[comp.name] = comp
    artifacts[boot.name] = boot
    raw = out / k.arch.uncompressed_image if k.arch.uncompressed_image else None
    raw = raw if raw is not None and raw.exists() else None
    if raw is not None:
        artifacts[raw.name] = raw
    if b.image.uimage:
        artifacts["uImage"] = out / "uImage.bringup"
    if k.dtb:
        found = sorted(out.glob(f"arch/{k.arch.srcarch}/boot/dts/**/{k.dtb}"))
        if not found:
            raise BuildFailed(f"build of {b.name}/{k.id}: dtb {k.dtb} was not built")
        artifacts["dtb"] = found[0]
    return Images(artifacts, comp, boot, raw)


def _file_size(name: str, p: Path) -> dict[str, Any]:
    return {"file": name, "bytes": p.stat().st_size}


def _sizes(ctx: Ctx, images: Images) -> dict[str, Any]:
    """The record's `sizes`: vmlinux's sections (ELF) and the images' bytes."""
    b, k, vmlinux = ctx.board, ctx.kernel, images.artifacts["vmlinux"]
    try:
        elf = elfsize.section_sizes(vmlinux)
    except ValueError as e:
        raise BuildFailed(f"build of {b.name}/{k.id}: {e}") from None
    boot = images.boot
    if "uImage" in images.artifacts:
        uimage: dict[str, Any] | None = _file_size("uImage", images.artifacts["uImage"])
    else:
        uimage = _file_size(boot.name, boot) if boot.name == "uImage" else None
    return {
        "sections": elf["sections"],
        "groups": elf["groups"],
        "berkeley": elf["berkeley"],
        "vmlinux_bytes": vmlinux.stat().st_size,
        "compressed_image": _file_size(images.compressed.name, images.compressed),
        "boot_image": _file_size(boot.name, boot),
        "uncompressed_image": _file_size(images.raw.name, images.raw) if images.raw is not None else None,
        "uimage": uimage,
    }


def _times(ctx: Ctx) -> dict[str, Any]:
    """The record's `time`: the whole build's and each make step's (mkimage aside)."""

    def total(field: str) -> float:
        return round(sum(getattr(s, field) for s in ctx.steps), 3)

    return {
        "real": total("real"),
        "user": total("user"),
        "sys": total("sys"),
        "clock": "monotonic; user/sys from wait4() rusage of each make process tree",
        "steps": [
            {"name": s.name, "real": round(s.real, 3), "user": round(s.user, 3), "sys": round(s.sys, 3)}
            for s in ctx.steps
            if s.name != "mkimage"
        ],
    }


def _what_was_built(ctx: Ctx, dropped: list[dict]) -> dict[str, Any]:
    """The record's fields that say what was built: kernel, sources, fixes, toolchain, config."""
    k = ctx.kernel
    return {
        "description": k.description,
        "kernelrelease": kernelrelease(ctx),
        "version": ctx.src.version,
        "era": k.era.name,
        "arch": k.arch.name,
        "kernel_arch": k.arch.kernel_arch,
        "source": ctx.src.detail
        | {"tree": str(ctx.src.path)}
        | ({"private_copy": str(ctx.private_copy)} if ctx.private_copy else {}),
        "fixes": [fix_record(k, f) for f in ctx.fixes],
        "toolchain": {
            "cross_compile": k.cross_compile,
            "gcc": ctx.tc.gcc,
            "version": ctx.tc.version,
            "ccache": bool(ctx.tc.ccache),
        },
        "config": {
            "defconfig": k.defconfig,
            "config_file": k.config_file,
            "fragments": list(k.fragments),
            "sha256": hashlib.sha256(dot_config(ctx).read_bytes()).hexdigest(),
            "dropped": dropped,
        },
    }


def collect(ctx: Ctx, key: str | None, started: str, dropped: list[dict]) -> tuple[records.Build, dict[str, Path]]:
    """The build record, and the build tree's file behind each artifact (published by kernel.py)."""
    from bringup.util import paths

    b, k = ctx.board, ctx.kernel
    images = _images(ctx)
    text = ctx.log_path.read_text(errors="replace")
    data = {
        "status": "ok",
        "board": b.name,
        "kernel": k.id,
        "key": key,
        "started": started,
        "finished": clock.now(),
        **_what_was_built(ctx, dropped),
        "time": _times(ctx),
        "jobs": ctx.jobs,
        "ccache": _ccache_stats(ctx),
        "kbuild_commands": kbuild_commands(text.encode()) or None,
        "sizes": _sizes(ctx, images),
        "warnings": len(re.findall(r": warning:", text)),
        "errors": len(re.findall(r": error:", text)),
        "artifacts": {
            name: f"images/{Path(p).name if name != 'config' else 'config'}" for name, p in images.artifacts.items()
        },
        "commands": [shlex.join(s.argv) for s in ctx.steps],
        "reproduce": f"scripts/bringup build-all --board {b.name} --kernel {k.id} --force",
        "build_dir": str(ctx.builddir),
        "log": "build.log",
        "host": {"nproc": os.cpu_count(), "bringup_root": str(paths.ROOT)},
    }
    try:
        return records.validate(data, records.Build, str(ctx.recdir / "build.json")), images.artifacts
    except records.RecordError as e:
        raise BuildFailed(f"build of {b.name}/{k.id}: {e}") from None
