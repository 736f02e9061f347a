"""The commands that read records outside the report (`bringup compare`, `compare --boot`,
`build-report`) check them against their sets as the report does (records/sets.py):
a record that is a member of a step's set must be the file that set wrote, else the
command refuses in one line naming itself, the file, the set and the mismatch, before
it prints anything; and it says on stderr which sets (and which records in no set) it
read.  A record with no `.sets/` beside it (a copy of one file, an older logs/) is read
as a record in no set."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from bringup import records
from bringup.errors import BringupError
from bringup.records.sets import SETS, SetManifest
from bringup.report.reading import is_dir
from bringup.util import paths


def board_dir(f: Path) -> Path | None:
    """The logs/<board>/ directory of a record (the one holding .sets/): the record's directory
    or the one above it (<board>/<kernel>/x.json, <board>/x.json); None when neither has sets."""
    for d in (f.parent, f.parent.parent):
        if is_dir(d / SETS):  # one that cannot be listed is Unreadable, not "no sets"
            return d
    return None


def _manifests(bdir: Path) -> list[tuple[str, SetManifest, list[str]]]:
    """Every step's manifest of a board with its problems (records.sets.check), journals finished first."""
    sets_dir = bdir / SETS
    if any(sets_dir.glob("*.pending.json")):
        records.sets.read_all(bdir)  # finishes a set a killed run left half switched in
    out = []
    for m in sorted(sets_dir.glob("*.json")):
        if m.name.endswith(".pending.json"):
            continue
        step = m.name.removesuffix(".json")
        man, problems = records.sets.check(bdir, step)
        if man is not None:
            out.append((step, man, problems))
    return out


def _member(bdir: Path, f: Path, manifests) -> tuple[str, SetManifest, list[str]] | None:
    """The step whose set f is a member of, and the problems of f in it; None when in no set."""
    try:
        rel = f.resolve().relative_to(bdir.resolve()).as_posix()
    except ValueError:
        return None
    for step, man, problems in manifests:
        if rel in man.members:
            mine = [p for p in problems if p.startswith(f"{bdir / rel}:")]
            return step, man, mine
    return None


def check(command: str, files: Iterable[Path], say: Callable[[str], None]) -> None:
    """Refuse (BringupError) when a file read is a set member that is not as its set wrote it;
    then say which sets were read (one line each; a file in no set, a build record, is read as before)."""
    read: dict[str, list[str]] = {}
    cache: dict[Path, list] = {}
    for f in dict.fromkeys(Path(x) for x in files):
        bdir = board_dir(f)
        try:
            found = _member(bdir, f, cache.setdefault(bdir, _manifests(bdir))) if bdir else None
        except BringupError as e:
            raise BringupError(f"{command}: the sets of {paths.rel(bdir or f.parent)} do not read: {e}") from None
        if found is None:
            continue
        step, man, problems = found
        if problems:
            raise BringupError(f"{command}: {step} set {man.set}: {_shown(problems[0], bdir, f)}")
        read.setdefault(f"{step} set {man.set} ({man.created})", []).append(paths.rel(f))
    for what, rels in read.items():
        say(f"{command}: read {what}: {', '.join(rels)}")


def _shown(problem: str, bdir: Path | None, f: Path) -> str:
    """A problem of records.sets.check with its file as the user sees it."""
    rel = f.resolve().relative_to(bdir.resolve()).as_posix() if bdir else f.name
    prefix = str((bdir or f.parent) / rel)
    return paths.rel(f) + problem.removeprefix(prefix) if problem.startswith(prefix) else problem
