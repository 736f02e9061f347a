"""docs/records.md describes every record kind at the version bringup writes, and
names every field of it: a field added to a model without a line in the docs fails."""

import re

import pytest
from pydantic import BaseModel

from bringup.records.base import Record
from bringup.records.boot import Boot, BootTiming
from bringup.records.build import Build
from bringup.records.buildcost import BuildCost
from bringup.records.measure import Footprint, Lmbench
from bringup.records.rootfs import Rootfs
from bringup.records.sizediff import SizeDiff
from bringup.records.workloads import Workloads
from bringup.util import paths

DOC = (paths.ROOT / "docs" / "records.md").read_text(encoding="utf-8")
KINDS = [Build, Rootfs, Boot, BootTiming, Footprint, Lmbench, Workloads, SizeDiff, BuildCost]


def section(model: type[Record]) -> str:
    """The docs section of a kind: from its `## `kind/N`` heading to the next heading of that level."""
    m = re.search(rf"^## `{re.escape(model.KIND)}/(\d+)`.*?$(.*?)(?=^## |\Z)", DOC, re.M | re.S)
    assert m, f"docs/records.md has no section for {model.KIND}"
    assert int(m.group(1)) == model.VERSION, (
        f"docs/records.md describes {model.KIND}/{m.group(1)}, bringup writes /{model.VERSION}"
    )
    return m.group(2)


@pytest.mark.parametrize("model", KINDS, ids=lambda m: m.KIND)
def test_the_overview_table_gives_the_current_and_readable_versions(model):
    row = re.search(rf"^\| `{re.escape(model.KIND)}` \| (\d+) \| ([\d, ]+) \|", DOC, re.M)
    assert row, f"no overview row for {model.KIND}"
    assert int(row.group(1)) == model.VERSION
    assert [int(v) for v in row.group(2).split(",")] == model.readable()


def field_names(model: type[BaseModel]) -> set[str]:
    return {f.alias or name for name, f in model.model_fields.items() if name != "schema_"}


@pytest.mark.parametrize("model", KINDS, ids=lambda m: m.KIND)
def test_every_top_level_field_is_documented(model):
    text = section(model)
    missing = sorted(n for n in field_names(model) if f"`{n}`" not in text and f"`{n}." not in text)
    assert not missing, f"docs/records.md, {model.KIND}: fields not described: {missing}"


def test_the_check_can_fail():
    class Extra(Build):
        a_field_nobody_documented: int = 0

    text = section(Build)
    assert "`a_field_nobody_documented`" not in text
    assert "a_field_nobody_documented" in field_names(Extra)
