"""A build's ccache hits come from its own stats log and the shared cache's counters
are never reset; the record keeps the ccache settings and the kbuild command count
the next build's progress counts against.  Fake Kbuild tree, real ccache."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bringup import records
from bringup.builder import ccache, make
from bringup.builder import kernel as build
from test_build_fake import do_build, setup_board

needs_ccache = pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache not installed (make deps)")

# ccache's own test of CCACHE_STATSLOG (github.com/ccache/ccache, test/suites/stats_log.bash,
# commit 0cd6f70b8d6d74427d6a60958a3bdc1ba0127a2e): the log after a miss and then a hit of test.c
UPSTREAM_STATS_LOG = """\
# test.c
cache_miss
direct_cache_miss
local_storage_miss
local_storage_miss
preprocessed_cache_miss
# test.c
direct_cache_hit
local_storage_hit
local_storage_hit
"""


def test_stats_log_counts_hits_and_misses():
    assert ccache.ccache_log_counts(UPSTREAM_STATS_LOG) == {"hits": 1, "misses": 1, "hit_rate": 0.5}
    assert ccache.ccache_log_counts("") == {"hits": 0, "misses": 0, "hit_rate": None}
    # calls that are not cacheable count as neither; interleaved blocks count alike
    text = "# a.c\n# b.c\ndirect_cache_hit\ncache_miss\n# /dev/null\nno_input_file\n# c.S\npreprocessed_cache_hit\n"
    assert ccache.ccache_log_counts(text) == {"hits": 2, "misses": 1, "hit_rate": 0.6667}


def test_show_config_lines_and_file_system_type():
    conf = "(default) compiler_check = mtime\n(environment) depend_mode = true\n(default) sloppiness = \n"
    assert ccache.parse_ccache_config(conf) == {"compiler_check": "mtime", "depend_mode": "true", "sloppiness": ""}
    mounts = "/dev/vda / ext4 rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n/dev/vdb /srv/my\\040cache xfs rw 0 0\n"
    assert ccache.filesystem_type(Path("/tmp/x/ccache"), mounts) == "tmpfs"
    assert ccache.filesystem_type(Path("/home/u/.cache"), mounts) == "ext4"
    assert ccache.filesystem_type(Path("/srv/my cache/ccache"), mounts) == "xfs"
    assert ccache.filesystem_type(Path("/tmpx"), mounts) == "ext4", "a mount point is a path prefix by parts"


def test_kbuild_command_lines_are_counted():
    log = (
        b"make[1]: Entering directory '/o'\n  GEN     Makefile\n  HOSTCC  scripts/basic/fixdep\n"
        b"  CC      kernel/fork.o\n  CC [M]  fs/x.o\n  OBJCOPY arch/arm/boot/Image\n"
        b"kernel/fork.c:12:3: warning: unused\n  12 |   int x;\n  Kernel: arch/arm/boot/zImage is ready\n"
    )
    assert make.kbuild_commands(log) == 5


def shared_counters(cache_dir: Path) -> dict[str, int]:
    p = subprocess.run(
        ["ccache", "--print-stats"], env=dict(os.environ, CCACHE_DIR=str(cache_dir)), capture_output=True, text=True
    )
    return {k: int(v) for k, v in (line.split("\t") for line in p.stdout.splitlines()) if v.strip().isdigit()}


@needs_ccache
def test_hits_are_per_build_and_the_shared_counters_are_left_alone(env, tmp_path):
    board, _, _ = setup_board(env, "6.1.0")
    ccdir = env["cache"] / "ccache"
    # another user of the same cache: one miss and one hit in the shared counters
    other = tmp_path / "other.c"
    other.write_text("int other(void) { return 1; }\n")
    for _ in range(2):
        subprocess.run(
            ["ccache", "gcc", "-c", str(other), "-o", str(tmp_path / "other.o")],
            env=dict(os.environ, CCACHE_DIR=str(ccdir)),
            check=True,
        )
    before = shared_counters(ccdir)
    assert before["direct_cache_hit"] == 1
    cold = do_build(env, board).record
    assert cold.ccache is not None and (cold.ccache.hits, cold.ccache.misses) == (0, 1)
    warm = do_build(env, board, force=True).record
    assert warm.ccache is not None and (warm.ccache.hits, warm.ccache.misses, warm.ccache.hit_rate) == (1, 0, 1.0)
    after = shared_counters(ccdir)
    assert after["direct_cache_hit"] == before["direct_cache_hit"] + 1, "the shared counters were reset"
    assert after["cache_miss"] == before["cache_miss"] + 1
    s = warm.ccache.settings
    assert s is not None and s.depend_mode and s.direct_mode and s.cache_dir == str(ccdir)
    assert s.version[0].isdigit() and s.compiler_check == "mtime" and s.same_filesystem_as_build is True
    assert s.filesystem, "the cache's file system type is recorded"


@needs_ccache
def test_the_users_ccache_settings_win_and_are_recorded(env, monkeypatch):
    board, _, _ = setup_board(env, "6.1.0")
    monkeypatch.setenv("CCACHE_NODEPEND", "1")
    monkeypatch.setenv("CCACHE_COMPILERCHECK", "content")
    rec = do_build(env, board).record
    assert rec.ccache is not None and rec.ccache.settings is not None
    assert not rec.ccache.settings.depend_mode and rec.ccache.settings.compiler_check == "content"


def test_the_record_counts_kbuild_commands_and_the_next_build_counts_against_them(env, monkeypatch):
    monkeypatch.setenv("BRINGUP_CCACHE", "0")
    board, _, _ = setup_board(env, "6.1.0")
    first = do_build(env, board).record
    assert first.ccache is None
    assert first.kbuild_commands == 2  # the fake's "  CC      fake.o" and "  LD      vmlinux"
    totals = []
    real_progress = build.Progress

    def spy(*a, **kw):
        totals.append(kw.get("total"))
        return real_progress(*a, **kw)

    monkeypatch.setattr(build, "Progress", spy)
    do_build(env, board, force=True)
    assert totals == [2]
    assert records.read(env["logs"] / "fake" / "k1" / "build.json", records.Build).kbuild_commands == 2


def test_host_programs_are_compiled_through_ccache_unless_the_host_compiler_is_chosen():
    assert make.hostcc("/usr/bin/ccache", ["KCFLAGS=-std=gnu89"]) == ["HOSTCC=/usr/bin/ccache gcc"]
    assert make.hostcc(None, []) == [], "no ccache, no HOSTCC"
    assert make.hostcc("/usr/bin/ccache", ["LLVM=1"]) == [], "LLVM=1 chooses clang as the host compiler"
    assert make.hostcc("/usr/bin/ccache", ["HOSTCC=gcc-10"]) == []
