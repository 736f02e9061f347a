"""Host networking helpers."""

from __future__ import annotations

import socket


def free_port(bind: str = "127.0.0.1") -> int:
    """A TCP port that nothing listens on at `bind` now (the kernel picks it).

    Raises OSError when `bind` is not an address of this host."""
    with socket.socket() as s:
        s.bind((bind, 0))
        return s.getsockname()[1]
