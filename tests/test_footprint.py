"""Footprint pieces without a guest: the benchmark list, .deb unpacking, tables."""

import subprocess

from bringup.measure import footprint
from bringup.util import cpio


def test_quick_and_full_lists():
    bset = footprint.load_set()
    quick = footprint.bench_files(bset, "quick")
    full = footprint.bench_files(bset, "full")
    ql = dict((e.path, e.data) for e in quick)["etc/bringup/bench.list"].decode().splitlines()
    fl = dict((e.path, e.data) for e in full)["etc/bringup/bench.list"].decode().splitlines()
    names = [line.split("\t")[0] for line in ql]
    assert "lat_rpc" not in names and "lat_ops" not in names and "lat_ctx_0k" in names
    assert len(fl) == len(bset.bench) > len(ql)
    assert "lat_pipe\t./lat_pipe -N 1 -W 0" in ql and "lat_pipe\t./lat_pipe " in fl
    assert all("{q}" not in line for line in ql + fl)
    env = dict((e.path, e.data) for e in quick)["etc/bringup/bench.env"].decode()
    assert "export ENOUGH=5000 TIMING_O=0 LOOP_O=0" in env
    assert "ENOUGH" not in dict((e.path, e.data) for e in full)["etc/bringup/bench.env"].decode()


def test_deb_entries_skip_docs_and_keep_links(tmp_path):
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: t\nVersion: 1\nArchitecture: all\nMaintainer: x <x@y>\nDescription: t\n"
    )
    (root / "usr/lib/t").mkdir(parents=True)
    (root / "usr/lib/t/libt.so.1").write_bytes(b"\x7fELF")
    (root / "usr/lib/t/libt.so").symlink_to("libt.so.1")
    (root / "usr/share/doc/t").mkdir(parents=True)
    (root / "usr/share/doc/t/copyright").write_text("c")
    subprocess.run(
        ["dpkg-deb", "-Zgzip", "--build", str(root), str(tmp_path / "t.deb")], check=True, capture_output=True
    )
    entries = {e.path: e for e in footprint.deb_entries(tmp_path / "t.deb")}
    assert entries["usr/lib/t/libt.so.1"].data == b"\x7fELF"
    assert entries["usr/lib/t/libt.so"].data == b"libt.so.1"
    assert not any(p.startswith("usr/share/doc") for p in entries)
    cpio.archive(list(entries.values()))  # packs


def _results():
    def fp(code, total, malloc):
        return {"memory_mb": 512, "kernel_code_data_kb": code, "total_free_kb": total, "malloc_kb": malloc}

    def lm(pipe, bw):
        return {
            "measured": True,
            "benchmarks": {
                "lat_pipe": {
                    "group": "Local communication latencies",
                    "rc": 0,
                    "metrics": [{"name": "Pipe latency", "value": pipe, "unit": "us", "better": "lower"}],
                },
                "bw_pipe": {
                    "group": "Local communication bandwidths",
                    "rc": 0,
                    "metrics": [{"name": "Pipe bandwidth", "value": bw, "unit": "MB/s", "better": "higher"}],
                },
            },
        }

    return {"2.4.25": (fp(1144, 15032, 9024), lm(100.0, 50.0)), "2.6.11.7": (fp(1528, 14676, 8320), lm(180.0, 25.0))}


def test_footprint_table_has_seed_002_numbers():
    t = footprint.render_footprint("tqm860l", _results())
    assert "| Kernel Code + Data | 1144 kB | 1528 kB | + 34 % = + 384 kB |" in t
    assert '| total "free" | 15032 kB | 14676 kB | - 2 % = - 356 kB |' in t
    assert "| Available for malloc() | 9024 kB | 8320 kB | - 8 % = - 704 kB |" in t


def test_lmbench_table_grouped_with_direction():
    t = footprint.render_lmbench(_results())
    assert "Local communication latencies:" in t and "Local communication bandwidths:" in t
    assert "| Pipe latency | us | lower | 100 | 180 | + 80 % |" in t
    assert "| Pipe bandwidth | MB/s | higher | 50 | 25 | - 50 % |" in t


def test_unmeasured_lmbench_is_not_zero():
    r = _results()
    r["2.6.11.7"] = (r["2.6.11.7"][0], {"measured": False, "reason": "no binaries for powerpc", "benchmarks": {}})
    t = footprint.render_lmbench(r)
    assert "lmbench 2.6.11.7: not measured (no binaries for powerpc)" in t
    assert "| Pipe latency | us | lower | 100 |" in t and " 0 |" not in t


def test_merge_runs_keeps_every_value_and_the_median():
    def run(v1, v2):
        return {
            "lat_pipe": {"rc": 0, "metrics": [{"name": "Pipe latency", "value": v1, "unit": "us", "better": "lower"}]},
            "lat_ctx_0k": {"rc": 0, "metrics": [{"name": "ctx 2p/0K", "value": v2, "unit": "us", "better": "lower"}]},
        }

    m = footprint.merge_runs([run(10, 1), run(30, 2), run(20, 9)])
    assert m["lat_pipe"]["metrics"][0]["values"] == [10, 30, 20]
    assert m["lat_pipe"]["metrics"][0]["value"] == 20
    assert m["lat_ctx_0k"]["metrics"][0]["value"] == 2
    assert footprint.merge_runs([run(1, 2)]) == run(1, 2)
