"""lmbench 3.0-a9 built from the verified source for 32-bit PowerPC, the architecture
Debian has no lmbench for: configs/lmbench.toml's [source] found in a download
directory (../shared/sources, added by tests/conftest.py), checked by sha256, built
static with powerpc-linux-gnu-gcc and Debian's glibc into an empty cache (what CI
starts from).  About 30 s on a busy 2-core host; the footprint boots that use it are
the report's (docs/eras.md)."""

import io
import time

import pytest
from elftools.elf.elffile import ELFFile

from bringup.builder import lmbench as lmbench_build
from bringup.errors import BringupError
from bringup.model import benchset

pytestmark = pytest.mark.integration


def test_lmbench_builds_static_for_powerpc_from_the_shared_source(tmp_path):
    bset = benchset.load_set()
    cache = tmp_path / "cache"
    try:
        spec = lmbench_build.default_spec(bset.source, cache, say=lambda m: None)
    except BringupError as e:
        pytest.skip(f"no lmbench-3.0-a9.tar.gz in a download directory here: {e}")
    assert spec["verified"] == "sha256" and spec["sha256"] == bset.source.sha256
    progs = benchset.programs(bset)
    t0 = time.monotonic()
    entries, info = lmbench_build.build(
        spec, bset.source_build, "powerpc-linux-gnu-", "powerpc", cache, say=print, programs=progs
    )
    took = time.monotonic() - t0
    print(f"lmbench for powerpc built in {took:.1f} s: {info['binaries']} programs")
    files = {e.path.rsplit("/", 1)[-1]: e.data for e in entries if e.data}
    assert sorted(files) == progs and len(progs) >= 20
    for name in ("lat_syscall", "lat_ctx", "bw_mem", "lat_tcp", "hello"):
        elf = ELFFile(io.BytesIO(files[name]))
        assert elf["e_machine"] == "EM_PPC" and elf.header["e_ident"]["EI_CLASS"] == "ELFCLASS32"
        assert elf.little_endian is False
        assert not any(s["p_type"] == "PT_INTERP" for s in elf.iter_segments()), f"{name} is not static"
        assert elf.get_section_by_name(".symtab") is None, f"{name} is not stripped"
    assert info["origin"] == "bringup-build" and info["version"] == "3.0-a9" and info["libc"] == "glibc"
    assert info["source_sha256"] == bset.source.sha256 and info["not_built"] == ["lat_rpc"]
    # cached by key: the second call builds nothing
    t0 = time.monotonic()
    again, info2 = lmbench_build.build(
        spec, bset.source_build, "powerpc-linux-gnu-", "powerpc", cache, say=lambda m: None, programs=progs
    )
    assert info2["build_key"] == info["build_key"] and time.monotonic() - t0 < took
