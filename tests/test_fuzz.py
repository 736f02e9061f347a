"""Property-based tests (Hypothesis): whatever a data file or a log holds, the
loaders end in a value or a one-line BringupError naming the file, and the pure
parsers end in a value.  Never another exception, never a hang."""

import math
import re
import tomllib
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bringup.errors import BringupError
from bringup.model.base import DataError
from bringup.model.benchset import load_set
from bringup.model.board import load_arch, load_board, load_era
from bringup.model.milestones import load_file, load_rules
from bringup.parse import lmbench, meminfo
from bringup.parse import milestones as ms
from bringup.parse.errors import LongNumber, ParseError
from bringup.util import paths

# examples per property: the profile's (conftest.py: 40 for make check, 150 with HYPOTHESIS_PROFILE=ci)
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# --- a tiny TOML writer, so that generated values become real files -----------


def toml_scalar(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').encode("unicode_escape").decode("ascii") + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_scalar(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_scalar(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() and k else toml_scalar(k)


def to_toml(d: dict) -> str:
    return "\n".join(f"{toml_key(k)} = {toml_scalar(v)}" for k, v in d.items()) + "\n"


scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70).filter(lambda i: -(2**63) <= i < 2**63),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1, max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)

BOARD = tomllib.loads((paths.BOARDS / "qemu-arm.toml").read_text())
BOARD_KEYS = sorted(BOARD) + ["qemu.smp", "qemu.args", "uboot.fdt_addr", "nfs.port", "serial", "power", "tftp"]
KERNEL_KEYS = ["id", "source", "defconfig", "fragments", "make_args", "cmdline", "era", "arch", "cross_compile"]


def mutate(d: dict, key: str, value) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in d.items()}
    if "." in key:
        table, sub = key.split(".", 1)
        out.setdefault(table, {})
        if isinstance(out[table], dict):
            out[table][sub] = value
    else:
        out[key] = value
    return out


def check_load(f: Path, load) -> None:
    try:
        load()
    except DataError as e:
        msg = str(e)
        assert "\n" not in msg, msg
        assert str(f.name) in msg or "board" in msg, msg


@SETTINGS
@given(key=st.sampled_from(BOARD_KEYS), value=values)
def test_board_with_one_field_of_any_value(tmp_path, key, value):
    f = tmp_path / "qemu-arm.toml"
    f.write_text(to_toml(mutate(BOARD, key, value)))
    check_load(f, lambda: load_board(str(f)))


@SETTINGS
@given(key=st.sampled_from(KERNEL_KEYS), value=values)
def test_board_kernel_with_one_field_of_any_value(tmp_path, key, value):
    kernels = [dict(k) for k in BOARD["kernels"]]
    kernels[0][key] = value
    f = tmp_path / "qemu-arm.toml"
    f.write_text(to_toml({**BOARD, "kernels": kernels}))
    check_load(f, lambda: load_board(str(f)))


@SETTINGS
@given(data=st.binary(max_size=400))
def test_board_file_of_any_bytes(tmp_path, data):
    f = tmp_path / "b.toml"
    f.write_bytes(data)
    check_load(f, lambda: load_board(str(f)))


@SETTINGS
@given(text=st.text(max_size=300))
def test_board_file_of_any_text(tmp_path, text):
    f = tmp_path / "b.toml"
    f.write_text(text)
    check_load(f, lambda: load_board(str(f)))


def config_copy(tmp_path: Path) -> Path:
    configs = tmp_path / "configs"
    if not configs.exists():
        import shutil

        shutil.copytree(paths.CONFIGS, configs)
    return configs


@SETTINGS
@given(
    kind=st.sampled_from(["arch/arm", "era/2.6+", "milestones", "lmbench"]),
    key=st.text(min_size=1, max_size=20),
    value=values,
)
def test_config_files_with_any_field(tmp_path, kind, key, value):
    configs = config_copy(tmp_path)
    f = configs / f"{kind}.toml"
    original = tomllib.loads((paths.CONFIGS / f"{kind}.toml").read_text())
    real_key = sorted(original)[hash(key) % len(original)] if key.isdigit() else key
    f.write_text(to_toml({**original, real_key: value}))
    loaders = {
        "arch/arm": lambda: load_arch("arm", configs),
        "era/2.6+": lambda: load_era("2.6+", configs),
        "milestones": lambda: load_rules(file=f),
        "lmbench": lambda: load_set(f),
    }
    check_load(f, loaders[kind])


@SETTINGS
@given(data=st.binary(max_size=300))
def test_milestones_file_of_any_bytes(tmp_path, data):
    f = tmp_path / "milestones.toml"
    f.write_bytes(data)
    check_load(f, lambda: load_file(f))


# --- pure parsers: any text gives a value ---------------------------------------

REAL_LINES = [
    line
    for p in sorted((paths.ROOT / "tests" / "data").rglob("*.log"))
    for line in p.read_text(errors="replace").splitlines()[:80]
]
log_lines = st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=120))


@SETTINGS
@given(lines=st.lists(log_lines, max_size=60), crlf=st.booleans())
@example(  # found by the CI profile: a last line a quoted-printable soft break joins still counts
    lines=[
        "> [=C2=A0=C2=A0=C2=A0 0.000000]=C2=A0=C2=A0 node=C2=A0=C2=A0 0: [mem 0x00=",
        "> [=C2=A0=C2=A0=C2=A0 0.000000] Kernel command line:=C2=A0=C2=A0 ip=3Ddhc=",
    ],
    crlf=False,
)
def test_bootlog_parser_takes_any_log(lines, crlf):
    data = ("\r\n" if crlf else "\n").join(lines).encode("utf-8", errors="replace")
    try:
        res = ms.parse_bootlog(data, RULES)
    except ParseError as e:  # what is not a boot log says so, in one line; so does a number no log holds
        assert "\n" not in str(e), str(e)
        assert str(e).startswith("input: not a boot log (") or BEYOND.match(str(e)), str(e)
        return
    assert res["lines"] == len(data.split(b"\n")) - (1 if data.endswith(b"\n") else 0)
    for found in res["milestones"].values():
        assert 1 <= found["line"] <= max(res["lines"], 1)
    assert res["text"]["assumed"] and "\n" not in res["text"]["assumed"]


RULES = load_rules()
# a refusal of a number no log holds (5000 digits, an infinite time): input, line or field, the number
BEYOND = re.compile(r"input: (line \d+: )?.*(beyond any value a log holds|not a finite number)$")
LONG = re.compile(r"\d{31}")


@SETTINGS
@given(text=st.one_of(st.text(max_size=300), st.lists(log_lines, max_size=20).map("\n".join)))
def test_meminfo_parsers_take_any_text(text):
    for fn in (
        meminfo.parse_memory_line,
        meminfo.parse_memory,
        meminfo.parse_free,
        meminfo.parse_meminfo,
        meminfo.parse_mem_eat,
    ):
        try:
            fn(text)
        except LongNumber as e:  # a number of more digits than any log holds: refused, in one line
            assert "\n" not in str(e) and "-digit number" in str(e), str(e)
            assert LONG.search(text), text


LMBENCH_LINES = [
    line
    for p in sorted((paths.ROOT / "tests" / "data").rglob("*"))
    if p.is_file() and "lmbench" in str(p)
    for line in p.read_text(errors="replace").splitlines()[:200]
]


@SETTINGS
@given(lines=st.lists(st.one_of(st.sampled_from(LMBENCH_LINES), st.text(max_size=80)), max_size=40))
def test_lmbench_parser_takes_any_text(lines):
    try:
        res = lmbench.parse_any("\n".join(lines))
    except LongNumber as e:  # a number of more digits than any result holds: refused, in one line
        assert "\n" not in str(e) and "beyond any value" in str(e), str(e)
        assert LONG.search("\n".join(lines)) or "lat_ctx" in str(e), lines
        return
    assert isinstance(res, dict)


def test_a_loader_error_is_a_bringup_error():
    """The property above accepts DataError only; DataError is what the CLI prints in one line."""
    assert issubclass(DataError, BringupError)


def one_line_error(e: ParseError, noun: str) -> None:
    msg = str(e)
    assert "\n" not in msg and msg.startswith(f"input: not {noun} ("), msg


@SETTINGS
@given(data=st.binary(max_size=3000))
def test_bootlog_parser_takes_any_bytes(data):
    try:
        res = ms.parse_bootlog(data, RULES)
    except ParseError as e:
        one_line_error(e, "a boot log")
        return
    assert res["format"] and res["lines"] >= 1


@SETTINGS
@given(data=st.binary(max_size=3000))
def test_lmbench_file_parser_takes_any_bytes(data):
    try:
        res = lmbench.parse_lmbench(data)
    except ParseError as e:
        one_line_error(e, "lmbench output")
        return
    assert any(r["measured"] or r["not_measured"] for r in res["results"])


def _core(res: dict) -> tuple:
    mem = res["memory"] or {}
    return (
        res["kernel_version"],
        {k: v for k, v in mem.items() if k.endswith("_kb")},
        res["fault"] and (res["fault"]["kind"], res["fault"]["line"]),
        sorted((k, v["line"]) for k, v in res["milestones"].items()),
        res["lines"],
    )


TRANSFORMS = {
    "quote": lambda line: "> " + line,
    "indent": lambda line: "    " + line,
    "ansi": lambda line: "\x1b[0;32m" + line + "\x1b[0m",
    "level": lambda line: "<6>" + line,
}


@SETTINGS
@given(lines=st.lists(st.sampled_from(REAL_LINES), min_size=1, max_size=40), how=st.sampled_from(sorted(TRANSFORMS)))
@example(  # found by the CI profile: an indented copy of a log with a mail-quoted line is still indented
    lines=["[   0.071612  0.071612] U-Boot 2023.01+dfsg-2+deb12u3 (Jun 22 2026 - 08:38:07 +0000)", "> > => printenv"],
    how="indent",
)
@example(  # found under load: an indented log (an RST literal block) given '<N>' levels is still indented
    lines=["    barebox@TI AM335x BeagleBone black:/ echo ${bootsource}"],
    how="level",
)
def test_text_as_it_reaches_people_gives_the_same_values(lines, how):
    """Real log lines, and the same lines quoted, indented, coloured or with <N>
    prefixes (all of them, as a mailer or a terminal does): the same values."""
    plain = "\n".join(lines).encode("utf-8", errors="replace")
    dressed = "\r\n".join(TRANSFORMS[how](x) if x else x for x in lines).encode("utf-8", errors="replace")
    try:
        want = _core(ms.parse_bootlog(plain, RULES))
    except ParseError:
        want = None
    try:
        got = _core(ms.parse_bootlog(dressed, RULES))
    except ParseError:
        got = None
    assert got == want


INITCALL_LINES = [
    line
    for p in sorted((paths.ROOT / "tests" / "data" / "real").rglob("initcall*.log"))
    for line in p.read_text(errors="replace").splitlines()
]


@SETTINGS
@given(lines=st.lists(st.one_of(st.sampled_from(INITCALL_LINES), log_lines), max_size=60))
def test_initcall_parser_takes_any_log(lines):
    from bringup.parse.initcalls import parse_initcalls

    data = "\n".join(lines).encode("utf-8", errors="replace")
    try:
        res = parse_initcalls(data)
    except ParseError as e:  # a text without initcall lines, or no text, says so in one line
        assert "\n" not in str(e) and str(e).startswith("input: ")
        return
    assert res["count"] == len(res["initcalls"]) and res["total_us"] >= 0
    for e in res["initcalls"]:
        assert 1 <= e["line"] <= res["lines"] and (e["us"] is None or e["us"] >= 0)
