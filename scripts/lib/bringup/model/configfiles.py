"""The files a board or an era names by path under configs/: .config files,
fragments, patches and source tarballs; where a name points and why a file is not
what it should be.  Each check returns the reason in words, or None."""

from __future__ import annotations

import re
from pathlib import Path

from bringup.model.base import show
from bringup.util import paths


def resolve_config(name: str, configs: Path) -> Path:
    p = Path(name)
    return p if p.is_absolute() else configs / p


def check_config_path(name: str, configs: Path) -> str | None:
    """Why a config file or fragment name is not acceptable, or None."""
    p = paths.expand_user(name, "config file")
    if p.is_absolute():
        return None if p.is_file() else "no such regular file"
    try:
        full = (configs / p).resolve()
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError before Python 3.13)
        return "a symlink loop"
    if not full.is_relative_to(configs.resolve()):
        return "a relative path must stay inside configs/"
    return None if full.is_file() else "no such file under configs/"


KCONFIG_LINE = re.compile(r"(CONFIG_[A-Za-z0-9_]+=.*|# CONFIG_[A-Za-z0-9_]+ is not set|#.*)")
MAX_CONFIG = 4 * 1024 * 1024  # a .config or fragment larger than this is not one


def config_text_problem(p: Path) -> str | None:
    """Why the file p is no Kconfig text (a .config or a fragment), or None: what is neither
    CONFIG_X=value, '# CONFIG_X is not set', a comment nor blank was silently dropped (a
    fragment that is /etc/passwd merged as an empty one)."""
    try:
        size = p.stat().st_size
        if size > MAX_CONFIG:
            return f"{size} bytes: too large for a config (at most {MAX_CONFIG})"
        data = p.read_bytes()
    except OSError as e:
        return f"cannot read it: {e.strerror}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 text (byte {e.start}), so no config"
    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s and not KCONFIG_LINE.fullmatch(s):
            return f"line {i}: {show(line)}: not a Kconfig line (CONFIG_<NAME>=<value>, '# CONFIG_<NAME> is not set')"
    return None


def tarball_problem(p: Path) -> str | None:
    """Why the file p is no tar archive (plain, gz, bz2 or xz), or None; only its first member is
    read. A file that is none was refused when the build extracted it, after the kernels before it."""
    import lzma
    import tarfile
    import zlib

    try:
        with tarfile.open(p, mode="r:*") as tf:
            if tf.next() is None:
                return "an empty tar archive"
    except tarfile.ReadError:
        return "not a tar archive (plain, gzip, bzip2 or xz)"
    except (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error) as e:
        return f"a damaged or truncated tar archive ({type(e).__name__})"
    except OSError as e:
        return f"cannot read it: {e.strerror or e}"
    return None
