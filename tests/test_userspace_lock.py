"""The shared cache's userspace builds (busybox from source, the musl prefix) under a lock
per output: two processes building the same thing at once (two checkouts, two boards of
one architecture) both end with the same good output, made once; the second waited and
said whom for.  The builds are fakes that wait for the test's go (an event, not a sleep)."""

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from bringup.builder import musl, rootfs

FORK = multiprocessing.get_context("fork")


def wait_for(what: str, pred, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _said(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _child(build, out: Path) -> None:
    """One process's build; what it said goes to out.say, what it got to out.result."""

    def say(line: str) -> None:
        with open(out.with_suffix(".say"), "a") as f:
            f.write(line + "\n")

    got = build(say)
    out.with_suffix(".result").write_text(str(got))


def two_at_once(tmp_path: Path, gate: Path, build) -> tuple[str, str, str, int]:
    """The first process starts building and holds at the gate; the second starts and waits
    for the first; then the gate opens.  (result 1, result 2, what the second said, pid 1)."""
    a = FORK.Process(target=_child, args=(build, tmp_path / "a"))
    a.start()
    wait_for("the first build", lambda: (gate / "started").exists())
    b = FORK.Process(target=_child, args=(build, tmp_path / "b"))
    b.start()
    wait_for("the second process waiting", lambda: "waiting for pid" in _said(tmp_path / "b.say"))
    (gate / "go").touch()
    a.join(60)
    b.join(60)
    assert (a.exitcode, b.exitcode) == (0, 0)
    results = [(tmp_path / f"{x}.result").read_text() for x in "ab"]
    return results[0], results[1], _said(tmp_path / "b.say"), a.pid or 0


def _fake_cc(tmp_path: Path) -> str:
    """A cross-compiler prefix whose gcc exists (the builds below never run it)."""
    d = tmp_path / "cross"
    d.mkdir()
    gcc = d / "fake-gcc"
    gcc.write_text("#!/bin/sh\nexit 0\n")
    gcc.chmod(0o755)
    return f"{d}/fake-"


def test_two_busybox_builds_from_source_at_once_build_once(tmp_path, monkeypatch):
    gate = tmp_path / "gate"
    gate.mkdir()
    tree = tmp_path / "busybox-src"
    (tree / "debian" / "config" / "pkg").mkdir(parents=True)
    (tree / "debian" / "config" / "pkg" / "static").write_text("CONFIG_STATIC=y\n")
    # make's busybox target: say it started, hold at the gate, count the build, write the binary
    (tree / "Makefile").write_text(
        "oldconfig:\n\t@true\n"
        "busybox:\n"
        f"\t@touch {gate}/started; while [ ! -e {gate}/go ]; do sleep 0.02; done\n"
        f"\t@echo built >> {gate}/count; printf 'BUSYBOX %s' $$PPID > $(O)/busybox\n"
    )
    monkeypatch.setattr(rootfs, "debian_source", lambda package, root, say=print: (tree, "1:1.35.0-4"))
    cache, cc = tmp_path / "cache", _fake_cc(tmp_path)
    r1, r2, said, pid = two_at_once(
        tmp_path, gate, lambda say: rootfs.busybox_from_source("armhf", cc, cache, say=say, libc="musl")
    )
    assert r1 == r2  # one binary, the same path and version
    out = cache / "userspace" / "armhf" / "busybox-1_1.35.0-4-musl-built"
    assert r1 == str((out, "1:1.35.0-4 (built from source)"))
    assert (gate / "count").read_text() == "built\n"  # made once
    assert out.read_bytes().startswith(b"BUSYBOX ") and os.access(out, os.X_OK)
    assert f"waiting for pid {pid}, which is building busybox 1:1.35.0-4 for armhf (musl)" in said
    assert not [p.name for p in out.parent.iterdir() if p.name.endswith(".tmp")]


def test_two_musl_prefixes_made_at_once_are_made_once(tmp_path, monkeypatch):
    gate = tmp_path / "gate"
    gate.mkdir()

    class Apt:
        def __init__(self, *a, **k):
            pass

        def candidate(self, pkg):
            return "1.2.3-1"

        def download(self, pkg):
            return tmp_path / "musl-dev.deb"

    def make(deb, tmp, dest, gnu_prefix, triplet):
        (gate / "started").touch()
        wait_for("the test's go", lambda: (gate / "go").exists())
        with open(gate / "count", "a") as f:
            f.write("made\n")
        (tmp / "bin").mkdir()
        (tmp / "bin" / f"{triplet}-gcc").write_text(f"made by {os.getpid()}\n")

    monkeypatch.setattr(musl, "PrivateApt", Apt)
    monkeypatch.setattr(musl, "_make", make)
    cache, cc = tmp_path / "cache", _fake_cc(tmp_path)
    r1, r2, said, pid = two_at_once(tmp_path, gate, lambda say: musl.toolchain("i386", cc, cache, say=say))
    assert r1 == r2
    dest = cache / "userspace" / "i386" / f"musl-1.2.3-1-r{musl.RECIPE}"
    assert (gate / "count").read_text() == "made\n"
    assert (dest / ".complete").read_text() == "musl-dev:i386 1.2.3-1\n"
    assert f"waiting for pid {pid}, which is building musl 1.2.3-1 for i386" in said
    assert [p.name for p in dest.parent.iterdir() if ".part-" in p.name] == []


def test_two_mem_eat_builds_at_once_build_once(tmp_path, monkeypatch):
    import types

    from bringup.builder import memeat

    gate = tmp_path / "gate"
    gate.mkdir()
    cross = tmp_path / "cross"
    cross.mkdir()
    # the compiler: say it started, hold at the gate, count the build, write its -o file
    gcc = cross / "fake-gcc"
    gcc.write_text(
        "#!/bin/sh\n"
        f"touch {gate}/started; while [ ! -e {gate}/go ]; do sleep 0.02; done\n"
        f"echo built >> {gate}/count\n"
        'while [ "$1" != "-o" ]; do shift; done; printf "MEM_EAT %s" $$ > "$2"\n'
    )
    gcc.chmod(0o755)
    monkeypatch.setattr(memeat.rootfs, "userspace_prefix", lambda board, cache, say=print: f"{cross}/fake-")
    board = types.SimpleNamespace(arch=types.SimpleNamespace(debian_arch="armhf"), libc="glibc")
    cache = tmp_path / "cache"
    r1, r2, said, pid = two_at_once(tmp_path, gate, lambda say: memeat.mem_eat_binary(board, cache, say=say))
    out = cache / "userspace" / "armhf" / "mem_eat"
    assert r1 == r2 == str(out)
    assert (gate / "count").read_text() == "built\n"  # made once
    assert out.read_bytes().startswith(b"MEM_EAT ")
    assert f"waiting for pid {pid}, which is building mem_eat for armhf" in said
    assert not [p.name for p in out.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture(autouse=True)
def _no_gate_left(tmp_path):
    yield
    if (tmp_path / "gate").exists():  # a failed test frees the builds still holding at the gate
        (tmp_path / "gate" / "go").touch()
