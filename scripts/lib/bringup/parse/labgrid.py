"""What `labgrid-client -p PLACE show` prints (labgrid 25/26), as data.

    Place 'qemu-1':
      matches:
        exp1/board1/*
      acquired: vm/alice
      acquired resources:
        exp1/board1/NetworkSerialPort/NetworkSerialPort
      ...
    Acquired resource 'NetworkSerialPort' (exp1/board1/NetworkSerialPort/NetworkSerialPort):
      {'acquired': 'qemu-1',
       'avail': True,
       'cls': 'NetworkSerialPort',
       'params': {'extra': {...}, 'host': '127.0.0.1', 'port': 45001, 'protocol': 'raw'}}

A place not acquired lists its "Matching resource"s the same way.  The
resource tables are Python literals (pprint), read with ast.literal_eval."""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

_PLACE = re.compile(r"^Place '(?P<name>[^']*)':$", re.M)
_MATCHES = re.compile(r"^  matches:\n(?P<lines>(?:    .*\n?)*)", re.M)
_ACQUIRED = re.compile(r"^  acquired: (?P<who>.*)$", re.M)
_RESOURCE = re.compile(
    r"^(?P<kind>Acquired|Matching) resource '(?P<name>[^']*)' \((?P<path>[^)\s]*)\):\n(?P<body>(?:  .*(?:\n|$))+)",
    re.M,
)


@dataclass
class Resource:
    name: str
    path: str  # exporter/group/class/name
    cls: str
    params: dict[str, Any]
    avail: bool
    acquired: str | None  # the place that holds it

    @property
    def exporter(self) -> str:
        return self.path.split("/", 1)[0]


@dataclass
class Place:
    name: str
    acquired: str | None  # host/user, or None
    resources: list[Resource] = field(default_factory=list)
    matches: list[str] = field(default_factory=list)  # exporter/group/class patterns

    def of_class(self, *classes: str) -> list[Resource]:
        return [r for r in self.resources if r.cls in classes]


def place_show(text: str) -> Place:
    """The place `show` printed; ValueError when the text is not such output."""
    m = _PLACE.search(text)
    if m is None:
        raise ValueError("no \"Place '...':\" line")
    a = _ACQUIRED.search(text)
    who = a["who"].strip() if a else "None"
    place = Place(m["name"], None if who == "None" else who)
    mt = _MATCHES.search(text)
    if mt:
        place.matches = [line.strip() for line in mt["lines"].splitlines() if line.strip()]
    for r in _RESOURCE.finditer(text):
        try:
            d = ast.literal_eval(textwrap.dedent(r["body"]).strip())
        except (ValueError, SyntaxError) as e:
            raise ValueError(f"resource {r['path']}: unreadable table ({e})") from None
        if not isinstance(d, dict):
            raise ValueError(f"resource {r['path']}: not a table")
        params = {k: v for k, v in dict(d.get("params") or {}).items() if k != "extra"}
        place.resources.append(
            Resource(
                name=r["name"],
                path=r["path"],
                cls=str(d.get("cls") or ""),
                params=params,
                avail=bool(d.get("avail", True)),
                acquired=d.get("acquired"),
            )
        )
    return place


_ERROR = re.compile(r"^(?:labgrid-client: Error: |Server error: (?:Error: )?)(?P<msg>.*)$", re.M)


def client_error(output: str) -> str:
    """The error labgrid-client printed (its last 'Error:' line), else the last line."""
    found = _ERROR.findall(output)
    if found:
        return found[-1].strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
