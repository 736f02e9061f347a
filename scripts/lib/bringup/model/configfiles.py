"""The files a board or an era names by path under configs/: .config files,
fragments, patches and source tarballs; where a name points and why a file is not
what it should be.  Each check returns the reason in words, or None."""

from __future__ import annotations

import itertools
import re
from pathlib import Path, PurePosixPath

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
    """Why the file p is no tar archive (plain, gz, bz2 or xz) or one with a member that leaves
    the directory it is extracted to (an absolute path, '..'), or None.  Only its first
    TAR_MEMBERS_CHECKED members are read (a kernel's tarball is read whole when the build
    extracts it, which refuses such a member too).  A file that is none was refused when the
    build extracted it, after the kernels before it."""
    import lzma
    import tarfile
    import zlib

    try:
        with tarfile.open(p, mode="r:*") as tf:
            first = tf.next()
            if first is None:
                return "an empty tar archive"
            for member in itertools.islice(itertools.chain([first], tf), TAR_MEMBERS_CHECKED):
                if member.name.startswith("/") or ".." in PurePosixPath(member.name).parts:
                    return f"member {member.name!r} would land outside the directory it is extracted to"
    except tarfile.ReadError:
        return "not a tar archive (plain, gzip, bzip2 or xz)"
    except (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error) as e:
        return f"a damaged or truncated tar archive ({type(e).__name__})"
    except OSError as e:
        return f"cannot read it: {e.strerror or e}"
    return None


TAR_MEMBERS_CHECKED = 200  # the members of a source tarball looked at as the board loads (a fraction of a second)
# what Kbuild's make cannot take in the path of a source tree (srctree): it splits or expands it
MAKE_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f:$\"'\\`#;&|*?<>()\[\]{}=%]")


def source_problem(source) -> str | None:
    """Why a kernel's local source (source.tarball, source.path: a SourceSpec) cannot be used,
    or None: a tarball that is missing, a directory or no tar archive; a tree that is missing
    or whose path make would split or expand."""
    if source.tarball:
        f = paths.expand_user(source.tarball, "source.tarball")
        if f.is_dir():
            return "a directory, not a tarball (give a tree as source.path)"
        return tarball_problem(f) if f.is_file() else "no such file"
    if source.path:
        tree = paths.expand_user(source.path, "source.path")
        bad = sorted(set(MAKE_UNSAFE.findall(str(tree.absolute()))))
        if bad:
            return (
                f"the path holds {''.join(bad)!r}, which the kernel's make cannot take (it builds from the tree): "
                "move or link the tree to a path of letters, digits and / . _ - + @ ,"
            )
        if not tree.is_dir():
            return "no such directory"
    return None
