"""util.clock and util.net."""

import re
import socket

import pytest

from bringup.util import clock, net


def test_clock_formats():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", clock.now())
    assert re.fullmatch(r"\d{8}T\d{6}Z", clock.stamp())


def test_free_port_is_free_and_bind_must_be_ours():
    port = net.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
    with pytest.raises(OSError):
        net.free_port("192.0.2.1")  # TEST-NET-1: not an address of this host
