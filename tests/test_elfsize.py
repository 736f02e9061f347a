import subprocess

from bringup.parse import elfsize


def test_berkeley_matches_gnu_size(tmp_path):
    c = tmp_path / "a.c"
    c.write_text(
        "const char ro[300] = {1}; int d[50] = {1}; int b[1000];\n"
        "int f(int x) { return x * d[x] + ro[x] + b[x]; }\nint main(void) { return f(1); }\n"
    )
    exe = tmp_path / "a.out"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(c)], check=True)
    out = subprocess.run(["size", str(exe)], capture_output=True, text=True, check=True).stdout
    text, data, bss, dec = (int(x) for x in out.splitlines()[1].split()[:4])
    s = elfsize.section_sizes(exe)
    assert s["berkeley"] == {"text": text, "data": data, "bss": bss, "dec": dec}
    assert s["sections"][".bss"] >= 4000 and s["sections"][".rodata"] >= 300
    assert s["groups"]["bss"] == s["sections"][".bss"]


def test_not_an_elf_is_a_parse_error_naming_the_file(tmp_path):
    import pytest

    from bringup.parse.errors import ParseError

    f = tmp_path / "vmlinux"
    f.write_bytes(b"not an ELF file at all, just text" * 4)
    with pytest.raises(ParseError, match=rf"^{f}: not a readable ELF file: "):
        elfsize.section_sizes(f)
