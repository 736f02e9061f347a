"""One boot of one kernel on one target, from power-on to a shell: BootSession.

    session = BootSession(board, kernel_id, build, recdir, initrd, run_dir, target, rules,
                          BootOptions(path="u-boot", root="ramdisk"))
    with session:                    # boots: returns once the end milestone is seen
        sh = session.shell()         # logged in; sh.run("free") ...
    session.record                   # what boot.json holds

Entering the session boots, in this order:
  1. the bootloader's files are staged where the target says (Target.staging);
  2. for root == "nfs", the rootfs copy is unpacked and its NFS server started
     (a server that cannot start fails the run at once, in one line);
  3. target.prepare(): QEMU is spawned (held until the console connects), a
     bench board is switched off;
  4. the console is opened, so that it listens before anything is printed;
  5. target.power_on(): a bench board is switched on; t0 is the target's
     (QEMU spawn, power-on) and the console counts from it;
  6. the U-Boot dialogue, for path "u-boot" (boot/uboot.py);
  7. milestones are scanned as lines arrive until the end milestone (the roles
     come from the rules: configs/milestones.toml); a fault, a timeout, the
     target dying or the console closing fails the boot (BootFailed), and so
     does a 'Linux version' banner that is not the build's (boot/identity.py:
     "booted kernel X, expected Y").
Leaving it closes the console, powers the target off, stops the NFS server,
and writes run_dir/boot.json: status ok, fail (with the error) or interrupted.
A boot that fails on entering is cleaned up and recorded the same way before
the exception leaves `with`.

The session never asks what kind of target it drives (boot/target.py).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec

from bringup import records
from bringup.boot import nfsroot, uboot
from bringup.boot.console import Console
from bringup.boot.identity import KernelCheck
from bringup.boot.shell import Shell
from bringup.boot.target import BootSpec, Target
from bringup.errors import BootFailed, BringupError
from bringup.model.board import Board
from bringup.model.bootpath import check_boot_path
from bringup.model.clocks import clock_of
from bringup.parse import milestones as ms
from bringup.util import clock

P = ParamSpec("P")

PATHS = ("direct", "u-boot")
ROOTS = ("ramdisk", "nfs")


def check_path_root(path: str, root: str) -> None:
    """A boot path and a root bringup knows, or one line naming the one it does not."""
    if root not in ROOTS:
        raise BringupError(f"root {root!r}: use 'ramdisk' or 'nfs'")
    if path not in PATHS:
        raise BringupError(f"boot path {path!r}: use 'direct' or 'u-boot'")


def kernel_cmdline(board: Board, kernel_cmdline: str = "", extra: str = "") -> str:
    parts = [f"console={board.console}"]
    if board.earlycon:
        parts.append(f"earlycon={board.earlycon}")
    for s in (board.cmdline, kernel_cmdline, extra):
        if s:
            parts.append(s)
    return " ".join(parts)


def boot_files(board: Board, build: records.Build, recdir: Path, path: str) -> dict[str, Path]:
    """The image files a boot needs, from the build record's artifacts."""
    art = build.artifacts
    target = board.image.target
    if path == "u-boot":
        key = "uImage" if "uImage" in art else target if target == "uImage" else None
        if key is None:
            raise BringupError(
                f"board {board.name}: booting through U-Boot needs a uImage; set "
                f"image.uimage = true in {board.file.name} and rebuild"
            )
    else:
        key = target
        if key not in art:
            raise BringupError(f"{recdir}/build.json: no {key} artifact")
    files = {"kernel": recdir / art[key]}
    if "dtb" in art:
        files["dtb"] = recdir / art["dtb"]
    for f in files.values():
        if not f.exists():
            raise BringupError(f"{f}: missing (the build record lists it; rebuild with FORCE=1)")
    return files


def make_uinitrd(board: Board, initrd: Path, out: Path) -> Path:
    argv = [
        "mkimage",
        "-A",
        board.arch.mkimage_arch or board.arch.kernel_arch,
        "-O",
        "linux",
        "-T",
        "ramdisk",
        "-C",
        "none",
        "-n",
        "bringup initramfs",
        "-d",
        str(initrd),
        str(out),
    ]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise BringupError(f"mkimage (ramdisk) failed: {p.stderr.strip()}")
    return out


@dataclass(frozen=True)
class BootOptions:
    """How one boot goes, besides what it boots (board, kernel, build, ramdisk), where it
    writes (run_dir) and the target it drives: BootSession's and boot_once's options.

    path: "direct" (the target loads the kernel) or "u-boot"; root: "ramdisk" or "nfs";
    timeout_factor: every timeout is multiplied by it; run_index: the round (the seed of
    the guest's random numbers on the instruction clock); extra_args: added to the command
    line (a boot profile's arguments for this kernel, the footprint's AUTORUN); cancel:
    once set, the boot stops as interrupted (a worker of several places whose study is
    being stopped: Ctrl-C reaches the main thread only)."""

    path: str = "direct"
    root: str = "ramdisk"
    timeout_factor: float = 1.0
    run_index: int = 0
    extra_args: str = ""
    cancel: threading.Event | None = None


DEFAULTS = BootOptions()


class BootSession:
    """One boot; see the module's docstring.  The constructor checks and resolves
    (boot files, NFS port, command line) and raises before anything is recorded;
    entering boots."""

    def __init__(
        self,
        board: Board,
        kernel_id: str,
        build: records.Build,
        recdir: Path,
        initrd: Path,
        run_dir: Path,
        target: Target,
        rules: ms.Rules,
        options: BootOptions = DEFAULTS,
    ):
        """options: how the boot goes (BootOptions); the rest: what it boots, where it
        writes, and the target it drives."""
        path, root = options.path, options.root
        check_path_root(path, root)
        check_boot_path(board, path)  # 'direct' needs a target that loads the kernel itself
        self.board, self.kernel_id, self.target, self.rules = board, kernel_id, target, rules
        self.initrd, self.run_dir, self.options = Path(initrd), Path(run_dir), options
        self.path, self.root, self.factor, self.cancel = path, root, options.timeout_factor, options.cancel
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.files = boot_files(board, build, recdir, path)
        self.nfs: nfsroot.NfsRoot | None = None
        if root == "nfs":
            self.nfs = nfsroot.NfsRoot(board, kernel_id, self.initrd, self.run_dir, target.nfs_address())
        self.cmdline = self._cmdline(options.extra_args)
        if path == "u-boot":
            uboot.quote(self.cmdline)  # a command line U-Boot cannot take fails here, before power-on
        self.seed = max(1, options.run_index)
        self.scan = ms.Scan(rules)
        self.kernel_check = KernelCheck.for_build(build, recdir)  # the booted kernel must be this build
        self._console: Console | None = None
        self._shell: Shell | None = None
        self._stack = contextlib.ExitStack()
        self._ended = False
        self.record: dict[str, Any] = self._first_record(build)

    def _cmdline(self, extra_args: str) -> str:
        """The kernel's command line: the board's, the kernel's, the root's (a ramdisk in the
        form the kernel's era takes it, 2.4: an ext2 image in /dev/ram0; or the NFS root's),
        then extra_args.  A ramdisk boot's initrd becomes the era's form here."""
        kernel = self.board.kernel(self.kernel_id)
        ramdisk_args = ""
        if self.nfs is None:
            self.initrd, ramdisk_args = ramdisk_for(kernel.era, self.initrd), kernel.era.ramdisk_cmdline
        extra = " ".join(s for s in (ramdisk_args, self.nfs.cmdline if self.nfs else "", extra_args) if s)
        return kernel_cmdline(self.board, kernel.cmdline, extra)

    def _first_record(self, build: records.Build) -> dict[str, Any]:
        """boot.json as it stands before the boot: a failure until the boot ends well."""
        return {
            "board": self.board.name,
            "kernel": self.kernel_id,
            "run_id": self.run_dir.name,
            "run_index": self.options.run_index,
            # the round's seed of the guest's random numbers on the instruction clock (BootSpec.seed)
            "clock": clock_of(self.board).record(seed=self.seed),
            "status": "fail",
            "error": None,
            "path": self.path,
            "started": clock.now(),
            "kernelrelease": build.kernelrelease,
            "build_key": build.key,
            "root": self.root,
            "initrd": str(self.initrd),
            "cmdline": self.cmdline,
            "t0": self.target.describe()["t0"],
            "log": "console.log",
            "raw": "console.raw",
        }

    # -- the boot -------------------------------------------------------------
    def __enter__(self) -> BootSession:
        try:
            self._boot()
        except BaseException as e:
            self._end(e)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._end(exc)

    def _boot(self) -> None:
        target, rec = self.target, self.record
        tftp_names = self._stage() if self.path == "u-boot" else None
        if self.nfs is not None:
            self._stack.enter_context(self.nfs)  # fails at once, in one line, if the server cannot start
            rec["nfs"] = self.nfs.info()
        self._stack.enter_context(target)
        target.prepare(
            BootSpec(
                path=self.path,
                cmdline=self.cmdline,
                kernel=self.files["kernel"],
                initrd=self.initrd if self.nfs is None else None,
                dtb=self.files.get("dtb"),
                seed=self.seed,
            )
        )
        rec.update(target.describe())
        console = Console(
            target.console_url,
            target.baud,
            t0=target.t0,  # QEMU's spawn; a bench board's t0 comes with power_on()
            log_path=self.run_dir / "console.log",
            raw_path=self.run_dir / "console.raw",
        )
        self._console = console
        self._stack.callback(console.close)  # closed first on the way out, before power-off
        target.power_on()
        if target.t0 is not None:
            console.rebase(target.t0)
        if tftp_names is not None:
            assert self.board.uboot is not None  # checked in __init__
            exp = console.expect(timeout=30 * self.factor)
            try:
                uboot.run(exp, self.board.uboot, tftp_names, self.cmdline, target.network(), timeout=60 * self.factor)
            except BootFailed as e:
                why = _cause(target, console)
                raise BootFailed(f"{e}" + (f" ({why})" if why else "")) from None
        _watch(console, target, self.scan, self.rules, self.factor, self.kernel_check, self.cancel)

    def _stage(self) -> dict[str, str]:
        """Copy the bootloader's files where the target's TFTP server serves them;
        their names for the bootloader."""
        st = self.target.staging(self.kernel_id)
        dest = st.dir / "uImage"
        try:
            st.dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.files["kernel"], dest)
            names = {"kernel": st.name("uImage")}
            if self.nfs is None:
                dest = st.dir / "uInitrd"
                make_uinitrd(self.board, self.initrd, dest)
                names["initrd"] = st.name("uInitrd")
            dtb = self.files.get("dtb")
            if dtb is not None:
                dest = st.dir / dtb.name
                shutil.copyfile(dtb, dest)
                names["dtb"] = st.name(dtb.name)
        except OSError as e:  # a full disk: no partial copy stays behind, and the line names the file
            with contextlib.suppress(OSError):
                dest.unlink()
            raise BootFailed(f"{self.kernel_id}: copying the boot files: {dest}: {e.strerror or e}") from None
        return names

    def gone(self) -> str:
        """Why the console went away in the middle of a step: the target's death (QEMU killed,
        its exit code), or the console's own reason."""
        why = _cause(self.target, self.console) if self._console is not None else None
        return f"console closed: {why or 'the target went away'}"

    # -- after the boot ---------------------------------------------------------
    @property
    def console(self) -> Console:
        if self._console is None:
            raise BringupError("boot session: no console (the session was not entered)")
        return self._console

    def shell(self, user: str = "root") -> Shell:
        """A shell on the console, logged in at the login prompt the boot ended at."""
        if self._shell is None:
            sh = Shell(
                self.console.expect(timeout=60 * self.factor),
                factor=self.factor,
                cancel=self.cancel,
                why_closed=self.gone,
            )
            sh.login(user)
            self._shell = sh
        return self._shell

    # -- the end ----------------------------------------------------------------
    def _end(self, exc: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        rec = self.record
        if exc is None:
            rec["status"] = "ok"
        elif isinstance(exc, KeyboardInterrupt):
            rec["status"], rec["error"] = "interrupted", "interrupted by the user"
        else:
            rec["status"], rec["error"] = "fail", str(exc) or type(exc).__name__  # made plain text by records.write
        try:
            self._stack.close()  # console, target (power off), NFS server
        finally:
            rec.update(self.scan.result())
            seen = self.kernel_check.seen
            rec["booted_kernel"] = seen.full() if seen else None
            rec["finished"] = clock.now()
            records.write(self.run_dir / "boot.json", rec, records.Boot)


def ramdisk_for(era, initrd: Path) -> Path:
    """The ramdisk as the kernel's era takes it: the gzip'd cpio itself (initramfs), or
    the ext2 image that builder/rootfs.py writes beside it (<name>.ext2: 2.4's initrd)."""
    if era.ramdisk != "ext2" or not initrd.name.endswith(".cpio.gz"):
        return initrd
    image = initrd.with_name(initrd.name.removesuffix(".cpio.gz") + ".ext2")
    if not image.is_file():
        raise BringupError(f"{image}: missing: the {era.name} era boots an ext2 initrd (the ramdisk step writes it)")
    return image


def _once(session: Callable[P, BootSession]) -> Callable[P, dict]:
    """boot_once(): a BootSession's boot to its end milestone and no further, taking the
    session's own arguments."""

    def boot_once(*args: P.args, **kwargs: P.kwargs) -> dict:
        """One boot to its end milestone and no further (BootSession's arguments); its
        record.  A failed boot is recorded and returned; set-up faults (BringupError) and
        interrupts are raised."""
        s = session(*args, **kwargs)
        with contextlib.suppress(BootFailed), s:
            pass
        return s.record

    return boot_once


boot_once = _once(BootSession)


def _watch(
    console: Console,
    target: Target,
    scan: ms.Scan,
    rules: ms.Rules,
    factor: float,
    check: KernelCheck | None = None,
    cancel: threading.Event | None = None,
) -> None:
    """Feed lines to the scanner until the end milestone; fail on a fault, a
    timeout (naming the milestone), the target dying, the console closing, or
    a version banner that is not the kernel built (check); stop as interrupted
    once cancel is set."""
    fed = 0
    last_t = 0.0
    partial_rules = rules.flagged("match_partial")
    while True:
        if cancel is not None and cancel.is_set():
            raise KeyboardInterrupt
        console.wait(fed, timeout=0.05)
        lines = console.lines
        while fed < len(lines):
            _feed(lines[fed], scan, check)
            fed += 1
        if scan.found:
            last_t = max(f.host for f in scan.found.values() if f.host is not None)
        part = console.partial()
        if part is not None and not scan.done():
            # a prompt ends without a newline: milestones that may match the incomplete line
            for m in partial_rules:
                if m.regex.search(part.text) and m.name not in scan.found:
                    scan.found[m.name] = ms.Found(m.name, part.t, ms.printk_time(part.text), part.n, part.text)
        if scan.done():
            missing = [m.label for m in rules.milestones if m.required and m.name not in scan.found]
            if missing:
                raise BootFailed(f"reached the end milestone without {', '.join(missing)}")
            return
        nxt = scan.next_required()
        if nxt is not None and console.now() - last_t > nxt.timeout * factor:
            last = max(scan.found.values(), key=lambda f: f.host or 0, default=None)
            after = f" (last milestone: {last.name} at {last.host:.2f}s)" if last else ""
            raise BootFailed(f"no {nxt.label} within {nxt.timeout * factor:.0f}s{after}")
        why = _cause(target, console)
        if why:
            raise BootFailed(f"{why}, before {nxt.label if nxt else 'the end'}")


def _feed(line, scan: ms.Scan, check: KernelCheck | None) -> None:
    """One console line to the scanner and the kernel check; a fault or another kernel fails the boot."""
    scan.feed(line.n, line.t, line.text)
    wrong = check.feed(line.text) if check is not None else None
    if wrong:
        raise BootFailed(wrong)
    if scan.fault:
        f = scan.fault
        raise BootFailed(f"{f['message']} at line {f['line']}: {f['text'].strip()!r}")


def _cause(target: Target, console: Console, grace: float = 1.0) -> str | None:
    """Why the boot cannot go on, naming the root cause: when the console closed because
    the target died (QEMU exiting), the socket closes a moment before the process can
    be reaped, so give the target a moment to say so."""
    why = target.alive()
    if why or not console.closed_reason:
        return why
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        why = target.alive()
        if why:
            return f"{why} ({console.closed_reason})"
        time.sleep(0.02)
    return console.closed_reason
