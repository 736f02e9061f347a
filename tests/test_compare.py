"""compare, the bloat-o-meter-style symbol diff and the .config diff, on small
ELF files built here and checked against nm."""

import json
import shutil
import subprocess

import recordfactory as rf
from bringup import records
from bringup.parse import sizediff
from conftest import run_cli

V1 = """
int keep(int x) { return x + 1; }
int grows(int x) { return x * 3; }
static int table[16] = {1};
int use(int i) { return table[i]; }
int gone(int x) { return x - 7; }
int main(void) { return keep(1) + grows(2) + use(3) + gone(4); }
"""
V2 = """
int keep(int x) { return x + 1; }
int grows(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * i ^ (s >> 3); return s * 3; }
static int table[64] = {1};
int use(int i) { return table[i]; }
int added(int x) { return x * x; }
int main(void) { return keep(1) + grows(2) + use(3) + added(4); }
"""


def elf(tmp_path, name, src):
    c = tmp_path / f"{name}.c"
    c.write_text(src)
    out = tmp_path / name
    subprocess.run(["gcc", "-O1", "-fno-inline", "-o", str(out), str(c)], check=True)
    return out


def nm_sizes(f):
    out = subprocess.run(["nm", "--size-sort", "-S", str(f)], capture_output=True, text=True, check=True).stdout
    return {line.split()[3]: int(line.split()[1], 16) for line in out.splitlines() if len(line.split()) == 4}


def test_symbols_match_nm_and_diff_counts(tmp_path):
    a, b = elf(tmp_path, "a", V1), elf(tmp_path, "b", V2)
    sa, sb = sizediff.symbols(a), sizediff.symbols(b)
    na = nm_sizes(a)
    for name in ("keep", "grows", "gone", "main"):
        assert sa[name] == na[name]
    assert sa["table"] == 64 and sb["table"] == 256
    d = sizediff.diff(sa, sb)
    rows = {r["symbol"]: r for r in d["rows"]}
    assert rows["table"]["delta"] == 192
    assert rows["gone"]["new"] == 0 and rows["added"]["old"] == 0
    assert rows["grows"]["delta"] > 0 and "keep" not in rows
    assert d["added"] >= 1 and d["removed"] >= 1
    assert d["up"] + d["down"] == d["total_after"] - d["total_before"]
    text = sizediff.render(d)
    assert text.splitlines()[-1].startswith(f"Total: Before={d['total_before']}, After={d['total_after']}, chg +")


def test_static_suffixes_are_dropped():
    assert sizediff.NUMBER_RE.sub("", "ZSTD_decompress.constprop.0") == "ZSTD_decompress.constprop"
    assert sizediff.NUMBER_RE.sub("", "write_buf.12") == "write_buf"


def test_config_diff():
    d = sizediff.config_diff(
        'CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\nCONFIG_D="x"\n',
        'CONFIG_A=y\nCONFIG_C=y\nCONFIG_D="y"\n# CONFIG_B is not set\n',
    )
    assert d == {"added": [("CONFIG_C", "y")], "removed": [("CONFIG_B", "y")], "changed": [("CONFIG_D", '"x"', '"y"')]}


def record(tmp_path, name, vmlinux, config, compressed):
    d = tmp_path / name
    (d / "images").mkdir(parents=True)
    shutil.copyfile(vmlinux, d / "images" / "vmlinux")
    (d / "images" / "config").write_text(config)
    from bringup.parse import elfsize

    e = elfsize.section_sizes(d / "images" / "vmlinux")
    rec = rf.build(
        name,
        "b",
        kernelrelease=name,
        time={"real": 10.0, "user": 20.0, "sys": 2.0},
        ccache={"hits": 50, "misses": 50, "hit_rate": 0.5},
        sizes={"berkeley": e["berkeley"], "compressed_image": {"file": "zImage", "bytes": compressed}},
        artifacts={"vmlinux": "images/vmlinux", "config": "images/config"},
    )
    records.write(d / "build.json", rec)
    return d


def test_compare_cli_with_exports(tmp_path):
    a = record(tmp_path, "k1", elf(tmp_path, "a", V1), "CONFIG_A=y\n", 1000)
    b = record(tmp_path, "k2", elf(tmp_path, "b", V2), "CONFIG_A=y\nCONFIG_B=y\n", 1100)
    p = run_cli(
        "compare",
        str(a),
        str(b / "build.json"),
        "--csv",
        str(tmp_path / "c.csv"),
        "--json",
        str(tmp_path / "c.json"),
        check=True,
    )
    assert "Compressed kernel" in p.stdout and "+ 10 %" in p.stdout
    assert "add/remove:" in p.stdout and "Total: Before=" in p.stdout
    assert ".config: 1 added, 0 removed, 0 changed" in p.stdout and "+ CONFIG_B=y" in p.stdout
    assert "ccache hits" in p.stdout
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert rows[0] == "metric,unit,b/k1,b/k2,delta_pct"
    assert any(r.startswith("Compressed kernel,kB,") and r.endswith(",10.00") for r in rows)
    j = json.loads((tmp_path / "c.json").read_text())
    assert j["symbols"]["rows"][0]["symbol"] and j["config"]["added"] == [["CONFIG_B", "y"]]


def test_compare_unknown_ref_is_one_line():
    p = run_cli("compare", "nope/1", "nope/2")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "compare: 'nope/1' is neither a build.json" in p.stderr


def test_compare_a_bad_record_is_one_line(tmp_path):
    a = record(tmp_path, "k1", elf(tmp_path, "a", V1), "CONFIG_A=y\n", 1000)
    b = record(tmp_path, "k2", elf(tmp_path, "b", V2), "CONFIG_A=y\n", 1100)
    rec = json.loads((b / "build.json").read_text())
    rec["sizes"]["compressed_image"]["bytes"] = float("nan")
    (b / "build.json").write_text(json.dumps(rec))
    p = run_cli("compare", str(a), str(b))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"{b / 'build.json'}: field 'sizes.compressed_image.bytes': nan: not a finite number" in p.stderr


def test_compare_goes_on_without_what_it_cannot_use(tmp_path):
    """A vmlinux that is not ELF and a config that leads out of the record's directory
    (here to a "secret" file) leave their diffs out, in one line each; nothing is read
    outside the record, and no traceback."""
    a = record(tmp_path, "k1", elf(tmp_path, "a", V1), "CONFIG_A=y\n", 1000)
    b = record(tmp_path, "k2", elf(tmp_path, "b", V2), "CONFIG_A=y\n", 1100)
    (b / "images" / "vmlinux").write_bytes(b"not an ELF file\n")
    secret = tmp_path / "secret"
    secret.write_text("CONFIG_SECRET=y\n")
    (b / "images" / "config").unlink()
    (b / "images" / "config").symlink_to(secret)
    p = run_cli("compare", str(a), str(b), "--json", str(tmp_path / "c.json"))
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "ELFError" not in p.stdout + p.stderr
    assert "Compressed kernel" in p.stdout and "+ 10 %" in p.stdout
    assert f"left out: symbol diff left out: {b / 'images' / 'vmlinux'}: not a readable ELF file: " in p.stdout
    assert (
        f"left out: {b / 'build.json'}: field 'artifacts.config': 'images/config': resolves outside the record's "
        "directory" in p.stdout
    )
    assert "SECRET" not in p.stdout and "SECRET" not in (tmp_path / "c.json").read_text()
    j = json.loads((tmp_path / "c.json").read_text())
    assert "symbols" not in j and "config" not in j and len(j["left_out"]) == 2
