"""Where an imported record came from (`bringup import`, docs/import.md): a boot
log or lmbench result made elsewhere, stored as the records of a pseudo-kernel.
Records a live run writes have `imported: null`."""

from __future__ import annotations

from typing import Literal

from bringup.records.base import Bytes, FileName, Part, Sha256, Text, Timestamp


class Imported(Part):
    """The provenance of an imported record."""

    kind: Literal["bootlog", "lmbench"]
    source: Text  # the file as the user named it (an absolute path)
    sha256: Sha256  # of its bytes
    bytes: Bytes
    format: Text  # the format the parser detected, e.g. "lmbench 2.0 summary", "printk times"
    assumed: Text  # what the parser assumed about the text, and what was selected (host, runs)
    label: Text | None  # the user's --label
    at: Timestamp  # when it was imported (UTC)
    kept: FileName  # the verbatim copy kept in the run directory (`run` of the record)
