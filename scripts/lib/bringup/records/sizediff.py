"""bringup.size-diff: logs/<board>/size-diffs/<key A>-<key B>.json, the symbol and
.config differences of two builds, computed once per pair of build keys from their
vmlinux and .config (parse/sizediff.py) and read by every later report."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bringup.records.base import Bytes, Count, Name, Part, Record, Sha256, Text, Timestamp

Setting = Annotated[list[Text], Field(min_length=2, max_length=2)]  # [symbol, value]
Change = Annotated[list[Text], Field(min_length=3, max_length=3)]  # [symbol, old value, new value]


class SymbolRow(Part):
    symbol: Text
    old: Bytes  # 0: not in A
    new: Bytes  # 0: not in B
    delta: int


class SymbolDiff(Part):
    """bloat-o-meter's view of two vmlinux symbol tables: the rows, largest change first."""

    added: Count
    removed: Count
    grown: Count
    shrunk: Count
    up: Bytes
    down: Annotated[int, Field(le=0)]
    total_before: Bytes
    total_after: Bytes
    rows: list[SymbolRow]


class ConfigDiff(Part):
    added: list[Setting]
    removed: list[Setting]
    changed: list[Change]


class SizeDiff(Record):
    KIND = "bringup.size-diff"
    VERSION = 1

    board: Name
    a: Name  # kernel ids, as the builds were named when the diff was made
    b: Name
    a_key: Sha256  # the build keys: the diff holds for any builds with these keys
    b_key: Sha256
    created: Timestamp
    symbols: SymbolDiff | None  # None: a vmlinux was not kept
    config: ConfigDiff | None  # None: a .config was not kept
