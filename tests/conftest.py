import io
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import pytest
from hypothesis import settings

import bringup.targets  # noqa: F401  (the kinds of target register themselves before a board loads)

# Hypothesis: a quick profile for `make check` (every property still tried on fresh
# examples each run), the full one for `make test` and CI (HYPOTHESIS_PROFILE=ci).
settings.register_profile("dev", max_examples=40)
settings.register_profile("ci", max_examples=150)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

ROOT = Path(__file__).resolve().parents[1]
FAKELINUX = Path(__file__).resolve().parent / "fakelinux"
# ../shared/sources beside the clone holds kernel tarballs the internet would give
# (linux-2.6.32.71.tar.xz): a download directory for every test and for the bringup
# processes they start (CI does the same through the Makefile).
SHARED_SOURCES = ROOT.parent / "shared" / "sources"


def add_download_dir(env: dict, d: Path) -> None:
    dirs = [x for x in env.get("BRINGUP_DL_DIR", "").split(":") if x]
    if str(d) not in dirs:
        env["BRINGUP_DL_DIR"] = ":".join(dirs + [str(d)])


if SHARED_SOURCES.is_dir():
    add_download_dir(os.environ, SHARED_SOURCES)  # type: ignore[arg-type]


def make_fake_tree(dest: Path, version: str, olddefconfig: bool = True) -> Path:
    """A fake kernel tree at dest for `version` ('2.4.25', '2.6.11.7', '6.1.0')."""
    parts = version.split(".")
    v, p, s = parts[0], parts[1], parts[2]
    extra = "." + parts[3] if len(parts) > 3 else ""
    shutil.copytree(FAKELINUX, dest)
    (dest / "Makefile").write_text(
        textwrap.dedent(f"""\
        VERSION = {v}
        PATCHLEVEL = {p}
        SUBLEVEL = {s}
        EXTRAVERSION = {extra}
        export VERSION PATCHLEVEL SUBLEVEL EXTRAVERSION
        include $(CURDIR)/fake.mk
        """)
    )
    if not olddefconfig:
        (dest / "scripts" / "kconfig" / "Makefile").write_text("oldconfig:\n\t@true\n")
    return dest


def write_board(boards: Path, name: str, kernels: list[dict], extra: str = "") -> Path:
    """A board file for the fake tree: arch arm, host gcc, zImage."""
    boards.mkdir(parents=True, exist_ok=True)
    ks = []
    for k in kernels:
        lines = ["[[kernels]]"]
        for key, val in k.items():
            lines.append(f"{key} = {toml_value(val)}")
        ks.append("\n".join(lines))
    text = (
        textwrap.dedent(f"""\
        name = "{name}"
        description = "fake board for tests"
        arch = "arm"
        cross_compile = ""
        memory_mb = 64
        {extra}
        [image]
        target = "zImage"

        [qemu]
        binary = "qemu-system-arm"
        machine = "virt"

        """)
        + "\n\n".join(ks)
        + "\n"
    )
    f = boards / f"{name}.toml"
    f.write_text(text)
    return f


def toml_value(v):
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


@pytest.fixture
def ctrl_c_handled():
    """Python's own Ctrl-C handler during the test, even where SIGINT came ignored (a shell
    script's background job inherits SIG_IGN, and Python keeps it): _thread.interrupt_main()
    does nothing for an ignored signal."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Isolated logs and cache; ccache off so the fake builds stay hermetic."""
    logs, cache = tmp_path / "logs", tmp_path / "cache"
    monkeypatch.setenv("BRINGUP_LOGS", str(logs))
    monkeypatch.setenv("BRINGUP_CACHE", str(cache))
    monkeypatch.setenv("PATH", os.environ["PATH"])
    return {"logs": logs, "cache": cache, "tmp": tmp_path}


def run_cli(*args, env_extra=None, check=False, in_process=True):
    """`bringup ARGS` as a CompletedProcess.  In this process by default: cli.main with
    stdout and stderr captured and the environment set for the call (what python -m
    bringup does, without a Python start and bringup's imports each time, about 0.4 s);
    in_process=False starts the real process."""
    if in_process:
        p = _run_cli_here(list(args), env_extra or {})
    else:
        e = dict(os.environ)
        if env_extra:
            e.update(env_extra)
        p = subprocess.run([sys.executable, "-m", "bringup", *args], capture_output=True, text=True, env=e)
    if check and p.returncode != 0:
        raise AssertionError(f"bringup {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def _run_cli_here(args: list[str], env_extra: dict) -> subprocess.CompletedProcess:
    from bringup import cli

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_streams = dict(os.environ), (sys.stdout, sys.stderr)
    os.environ.update(env_extra)
    sys.stdout, sys.stderr = out, err
    try:
        code = cli.main(args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception:  # what the interpreter would do with it: a traceback, exit 1
        traceback.print_exc(file=err)
        code = 1
    finally:
        sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["bringup", *args], code, out.getvalue(), err.getvalue())
