"""Where things are: the project tree, the cache, the logs."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]  # scripts/lib/bringup/util -> project root
BOARDS = ROOT / "boards"
CONFIGS = ROOT / "configs"
OVERLAY = ROOT / "rootfs-overlay"


def logs_dir() -> Path:
    """Results (records and logs).  BRINGUP_LOGS overrides logs/."""
    env = os.environ.get("BRINGUP_LOGS")
    return _directory(Path(env) if env else ROOT / "logs", "BRINGUP_LOGS" if env else "", "results")


def cache_dir() -> Path:
    """Downloads, extracted sources, build trees and ccache.

    BRINGUP_CACHE overrides it; the default lives outside the work tree so that
    fresh clones (and the tests) reuse it."""
    from bringup.errors import BringupError

    env = os.environ.get("BRINGUP_CACHE")
    xdg = os.environ.get("XDG_CACHE_HOME")
    p = Path(env) if env else Path(xdg) / "bringup" if xdg else Path.home() / ".cache" / "bringup"
    var = "BRINGUP_CACHE" if env else "XDG_CACHE_HOME" if xdg else ""
    bad = sorted(set(re.findall(r"[\s\x00-\x1f\x7f:$\"'\\`#;&|*?<>()\[\]{}]", str(p.absolute()))))
    if bad:  # the kernel trees and O= build directories live here: Kbuild and make would split or expand them
        name = f"{var}={show(str(p))}" if var else show(str(p))
        raise BringupError(
            f"{name}: the cache directory's path holds {''.join(bad)!r}, which the kernel's make cannot take "
            "(source and build trees live there); choose a path of letters, digits and / . _ - + @ % , = ~"
        )
    return _directory(p, var, "cache")


def _directory(p: Path, var: str, what: str) -> Path:
    """p, when it is a directory or can become one; a BringupError naming it (and the variable
    that sets it) when it or the nearest existing folder above it is a file, a device or a
    dangling link, found before any work rather than when the first record is written."""
    from bringup.errors import BringupError

    name = f"{var}={show(str(p))}" if var else show(str(p))
    q = p
    while not q.is_dir():
        if q.exists() or q.is_symlink():
            kind = "a dangling symlink" if not q.exists() else "not a directory"
            where = name if q == p else f"{name} ({show(str(q))} is {kind})"
            raise BringupError(f"{where}: the {what} directory cannot be there: {kind}")
        if q.parent == q:
            break
        q = q.parent
    return p


def expand_user(p: str | Path, what: str = "path") -> Path:
    """Path(p).expanduser(), with `~nosuchuser/...` (or `~` without a home) a one-line
    BringupError naming the path, not a KeyError or RuntimeError."""
    try:
        return Path(p).expanduser()
    except (KeyError, RuntimeError):
        from bringup.errors import BringupError

        user = str(p)[1:].split("/", 1)[0]
        who = f"no user {user!r} on this host" if user else "no home directory"
        raise BringupError(f"{what} {show(str(p))}: {who} to expand '~' to") from None


def show(s: str, limit: int = 200) -> str:
    """A value for an error line: repr-quoted (control characters and escapes made visible), cut short."""
    r = repr(s)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def rel(p: Path) -> str:
    """A path as the user should see it: relative to the project when inside it."""
    p = Path(p)
    try:
        return str(p.resolve().relative_to(ROOT))
    except (ValueError, RuntimeError, OSError):  # outside the project; a symlink loop (RuntimeError before 3.13)
        return str(p)
