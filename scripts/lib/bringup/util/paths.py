"""Where things are: the project tree, the cache, the logs."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]  # scripts/lib/bringup/util -> project root
BOARDS = ROOT / "boards"
CONFIGS = ROOT / "configs"
OVERLAY = ROOT / "rootfs-overlay"


def logs_dir() -> Path:
    """Results (records and logs).  BRINGUP_LOGS overrides logs/."""
    return Path(os.environ.get("BRINGUP_LOGS") or ROOT / "logs")


def cache_dir() -> Path:
    """Downloads, extracted sources, build trees and ccache.

    BRINGUP_CACHE overrides it; the default lives outside the work tree so that
    fresh clones (and the tests) reuse it."""
    env = os.environ.get("BRINGUP_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "bringup" if xdg else Path.home() / ".cache" / "bringup"


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
    except ValueError:
        return str(p)
