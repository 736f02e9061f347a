"""Host networking helpers."""

from __future__ import annotations

import os
import re
import socket


def free_port(bind: str = "127.0.0.1") -> int:
    """A TCP port that nothing listens on at `bind` now (the kernel picks it).

    Raises OSError when `bind` is not an address of this host."""
    with socket.socket() as s:
        s.bind((bind, 0))
        return s.getsockname()[1]


HOST_PORT = re.compile(r"([A-Za-z0-9_.][A-Za-z0-9_.-]*|\[[0-9A-Fa-f:]+\]):([0-9]{1,5})")


def coordinator_from_env() -> str | None:
    """LG_COORDINATOR (a labgrid coordinator's HOST:PORT), None when unset; a BringupError,
    one line, when it is no HOST:PORT (checked by the CLI at its start, not at the first boot)."""
    from bringup.errors import BringupError

    v = os.environ.get("LG_COORDINATOR")
    if not v:
        return None
    m = HOST_PORT.fullmatch(v)
    if m is None or not 1 <= int(m.group(2)) <= 65535:
        raise BringupError(f"LG_COORDINATOR={v!r}: not a coordinator's HOST:PORT (a TCP port is 1 to 65535)")
    return v
