"""The era's fixes of one kernel build (configs/era/*.toml, docs/eras.md): which
apply to its version, architecture and gcc, what each is in the build record (with
the sha256 of what it changes), applying their patches, and the private copy of a
tree that builds in place (2.4) or is patched."""

from __future__ import annotations

import hashlib
import shlex
import shutil
import subprocess
from pathlib import Path

from bringup.builder import sources, toolchain
from bringup.builder.context import Ctx, _log, _rel
from bringup.errors import BringupError, BuildFailed
from bringup.model.board import EraFix, Kernel


def select_fixes(kernel: Kernel, src: sources.SourceTree, tc: toolchain.Toolchain) -> list[EraFix]:
    """The era's fixes for this kernel: its version (the tree's Makefile, else the board's
    source.version), its architecture, the gcc major version of its toolchain."""
    return kernel.era.fixes_for(src.version or kernel.source.version, kernel.arch, tc.major)


def fix_sha256(kernel: Kernel, fix: EraFix) -> str:
    """What a fix is, as one sha256: of its patch or fragment file, else of its settings."""
    if fix.patch:
        return hashlib.sha256(kernel.era.patch_path(fix).read_bytes()).hexdigest()
    if fix.fragment:
        return hashlib.sha256(kernel.era.fragment_path(fix).read_bytes()).hexdigest()
    return hashlib.sha256(_fix_settings(fix).encode()).hexdigest()


def _fix_settings(fix: EraFix) -> str:
    if fix.make_vars:
        return "".join(f"{var}={val}\n" for var, val in sorted(fix.make_vars.items()))
    return "CC += " + " ".join(fix.cc_flags) + "\n"


def fix_record(kernel: Kernel, fix: EraFix) -> dict:
    """A fix as the build record lists it."""
    rec: dict = {"name": fix.name, "kind": fix.kind, "sha256": fix_sha256(kernel, fix)}
    if fix.patch:
        rec["patch"] = f"configs/era/{fix.patch}"
    elif fix.fragment:
        rec["fragment"] = fix.fragment
    elif fix.make_vars:
        rec["make_vars"] = dict(fix.make_vars)
    else:
        rec["cc_flags"] = list(fix.cc_flags)
    rec["avoids"] = fix.avoids
    rec["unchanged"] = fix.unchanged
    if fix.changes:
        rec["changes"] = fix.changes
    if fix.overrides:
        rec["overrides"] = fix.overrides
    return rec


def _apply_patches(ctx: Ctx, tree: Path, patches: list[EraFix]) -> None:
    """Apply each patch fix to `tree` (a private copy) with patch -p1; a patch that does
    not apply fails the build in one line naming the fix."""
    if patches and not shutil.which("patch"):
        raise BuildFailed(f"era fix {patches[0].name}: needs the 'patch' program (Debian package patch; make deps)")
    for fix in patches:
        pf = ctx.kernel.era.patch_path(fix)
        argv = ["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-d", str(tree), "-i", str(pf)]
        p = subprocess.run(argv, capture_output=True, text=True)
        _log(ctx, f"$ {shlex.join(argv)}\n{p.stdout}{p.stderr}# exit {p.returncode}")
        if p.returncode != 0:
            why = next(
                (line for line in (p.stdout + p.stderr).splitlines() if "FAILED" in line or "can't find" in line),
                (p.stdout + p.stderr).strip().splitlines()[-1] if (p.stdout + p.stderr).strip() else "",
            )
            raise BuildFailed(
                f"era fix {fix.name}: configs/era/{fix.patch} does not apply to {ctx.src.version or 'the tree'} "
                f"({why.strip()}); log: {_rel(ctx.recdir / 'build-failed.log')}"
            )


def _private_copy(src: Path, dest: Path, say, why: str = "2.4-era kernels build in place") -> Path:
    """A private copy of a tree (rsync keeps it incremental): 2.4-era trees cannot build
    out of tree, and era fixes are applied to a copy, never to the source."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    say(f"  copying the tree to {dest} ({why})")
    if shutil.which("rsync"):
        p = subprocess.run(["rsync", "-a", "--exclude", ".git", f"{src}/", f"{dest}/"], capture_output=True, text=True)
        if p.returncode != 0:
            raise BringupError(f"copying {src} to {dest} failed: {p.stderr.strip()}")
    else:
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)
    return dest
