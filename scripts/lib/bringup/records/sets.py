"""Results as sets (docs/records.md, "Sets"): the files of one step that belong
together land whole or not at all.

    with records.ResultSet(logs / board, "footprint") as s:
        s.write(recdir / "footprint.json", footprint_record, records.Footprint)   # staged, nothing visible yet
        s.write(recdir / "lmbench.json", lmbench_record, records.Lmbench)
        s.remove(board_dir / "footprint-failed.json")             # a stale failure record
    # leaving the block without an exception switches every file in; with one, none

Each member is written in full (fsync) to a temporary file beside its final
name first, so a full disk or an interrupted run fails before anything visible
changes.  Then a journal (`.sets/<step>.pending.json`) lists the renames, the
renames are done, the set's manifest (`.sets/<step>.json`, a `bringup.set`
record) is written with every member's sha256, and the journal is removed.  A
run killed between the journal and the manifest leaves the journal: the next
step of the board, or a reader, finishes the renames (every staged file is
complete), so a reader never keeps half of one run and half of another.
Readers check the members against the manifest (check()) and say which set
they read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self, TypeVar, overload

from pydantic import Field

from bringup.records.base import Part, Record, RecordError, Sha256, Text, Timestamp
from bringup.records.io import _default, _umask, read, render, write_text
from bringup.util import clock

SETS = ".sets"  # under logs/<board>/
R = TypeVar("R", bound=Record)


class Member(Part):
    sha256: Sha256
    set: str = Field(min_length=1, max_length=100)


class SetManifest(Record):
    """`logs/<board>/.sets/<step>.json`: the files of a step's last sets, each with its
    sha256 and the set that wrote it."""

    KIND = "bringup.set"
    VERSION = 1

    step: str = Field(min_length=1, max_length=100)
    set: str = Field(min_length=1, max_length=100)  # the last set
    created: Timestamp
    members: dict[str, Member]  # path relative to logs/<board>/ -> its sha256 and set
    removed: list[Text] = []  # files the last set removed (a stale failure record)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ResultSet:
    """The files of one step, switched in together when the block ends without an exception."""

    def __init__(self, board_dir: Path, step: str) -> None:
        self.board_dir = Path(board_dir)
        self.step = step
        self.id = f"{clock.stamp()}-{secrets.token_hex(3)}"
        self._staged: list[tuple[Path, Path, str]] = []  # final, temporary, sha256
        self._removed: list[Path] = []

    # -- staging --
    @overload
    def write(self, path: Path, rec: R, model: None = None) -> R: ...
    @overload
    def write(self, path: Path, rec: Mapping[str, Any], model: type[R]) -> R: ...

    def write(self, path: Path, rec: Record | Mapping[str, Any], model: type[Record] | None = None) -> Record:
        """A record, validated as records.write() does, staged."""
        m, text = render(Path(path), rec, model)
        self._add(Path(path), text.encode())
        return m

    def write_text(self, path: Path, text: str) -> None:
        self._add(Path(path), text.encode())

    def write_json(self, path: Path, data: Any) -> None:
        self.write_text(path, json.dumps(data, indent=2, allow_nan=False, default=_default) + "\n")

    def remove(self, path: Path) -> None:
        """path is removed when the set lands (a stale failure record, a chart not drawn this time)."""
        self._removed.append(Path(path))

    def _add(self, path: Path, data: bytes) -> None:
        self._rel(path)  # a member lies under logs/<board>/
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.set-{self.id}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 & ~_umask())
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise RecordError(f"{path}: not written ({self.step} set {self.id}): {e.strerror or e}") from None
        self._staged.append((path, tmp, _sha(data)))

    def _rel(self, path: Path) -> str:
        try:
            return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(self.board_dir)))
        except ValueError:
            raise RecordError(f"{path}: not under {self.board_dir}, so not a member of its {self.step} set") from None

    # -- switching in --
    def abort(self) -> None:
        """Nothing of the set becomes visible: the staged files go."""
        for _, tmp, _ in self._staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._staged = []

    def commit(self) -> SetManifest:
        journal = self.board_dir / SETS / f"{self.step}.pending.json"
        plan = {
            "set": self.id,
            "step": self.step,
            "renames": [[str(t), str(f), s] for f, t, s in self._staged],
            "remove": [str(p) for p in self._removed],
        }
        try:
            write_text(journal, json.dumps(plan, indent=1) + "\n")
        except OSError as e:
            self.abort()
            raise RecordError(f"{journal}: not written ({self.step} set {self.id}): {e.strerror or e}") from None
        return _finish(self.board_dir, journal, plan)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, et, ev, tb) -> None:
        if et is None:
            self.commit()
        else:
            self.abort()


def _finish(board_dir: Path, journal: Path, plan: dict) -> SetManifest:
    """Do a journal's renames (those not done yet), write the manifest, remove the journal."""
    man_file = board_dir / SETS / f"{plan['step']}.json"
    try:
        old = read(man_file, SetManifest).members if man_file.exists() else {}
    except RecordError:
        old = {}
    members = dict(old)
    for tmp, final, sha in plan["renames"]:
        with contextlib.suppress(FileNotFoundError):  # done before the run stopped
            os.replace(tmp, final)
        members[str(Path(os.path.abspath(final)).relative_to(os.path.abspath(board_dir)))] = Member(
            sha256=sha, set=plan["set"]
        )
    removed = []
    for p in plan["remove"]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)
        rel = str(Path(os.path.abspath(p)).relative_to(os.path.abspath(board_dir)))
        members.pop(rel, None)
        removed.append(rel)
    man = SetManifest(step=plan["step"], set=plan["set"], created=clock.now(), members=members, removed=removed)
    m, text = render(man_file, man, SetManifest)
    write_text(man_file, text)
    journal.unlink(missing_ok=True)
    return m  # type: ignore[return-value]


def recover(board_dir: Path) -> list[str]:
    """Finish the sets a killed run left half switched in (their journals); the steps finished."""
    done: list[str] = []
    d = Path(board_dir) / SETS
    if not d.is_dir():
        return done
    for journal in sorted(d.glob("*.pending.json")):
        try:
            plan = json.loads(journal.read_text())
            _finish(Path(board_dir), journal, plan)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RecordError(f"{journal}: a set left half switched in cannot be finished: {e}") from None
        done.append(f"{plan['step']} set {plan['set']}")
    return done


def check(board_dir: Path, step: str) -> tuple[SetManifest | None, list[str]]:
    """The step's manifest (None when no set was written yet) and one line per member
    that is not the file the set wrote (changed, missing, or written outside a set)."""
    man_file = Path(board_dir) / SETS / f"{step}.json"
    if not man_file.exists():
        return None, []
    man = read(man_file, SetManifest)
    problems = []
    for rel, m in sorted(man.members.items()):
        f = Path(board_dir) / rel
        try:
            data = f.read_bytes()
        except FileNotFoundError:
            problems.append(f"{f}: missing (a member of {step} set {m.set})")
            continue
        except OSError as e:
            problems.append(f"{f}: cannot read: {e.strerror} (a member of {step} set {m.set})")
            continue
        if _sha(data) != m.sha256:
            problems.append(f"{f}: not the file {step} set {m.set} wrote (sha256 differs)")
    return man, problems


def tidy(board_dir: Path, say=print) -> None:
    """What a measuring step does first, under the board's lock: finish the sets a killed
    run left half switched in (saying so), then remove staged files no set owns."""
    for line in recover(board_dir):
        say(f"  finished {line}, which a killed run left half switched in")
    clean_staged(board_dir)


def clean_staged(board_dir: Path) -> None:
    """Remove the staged files of sets that never got a journal (a run killed while staging);
    called under the board's lock (util/lock.py), so no live run owns them."""
    b = Path(board_dir)
    for pattern in (".*.set-*", "*/.*.set-*", "*/*/.*.set-*"):  # where members lie: <board>/, <kernel>/, report/charts/
        for p in b.glob(pattern):
            with contextlib.suppress(OSError):
                p.unlink()


def read_all(board_dir: Path) -> list[dict[str, Any]]:
    """Every step's sets under logs/<board>/ for a reader: per step the last set, when it was
    written, the sets its members come from, and one line per member that is not the file
    its set wrote.  A set a killed run left half switched in (a journal) is finished first,
    unless a run of the board holds its lock (then that run finishes it)."""
    import fcntl

    b = Path(board_dir)
    d = b / SETS
    if not d.is_dir():
        return []
    if any(d.glob("*.pending.json")):
        with contextlib.suppress(OSError):
            fd = os.open(b / ".lock", os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                recover(b)
            except (BlockingIOError, RecordError):
                pass
            finally:
                os.close(fd)
    out = []
    for f in sorted(d.glob("*.json")):
        if f.name.endswith(".pending.json"):
            continue
        step = f.name.removesuffix(".json")
        try:
            man, problems = check(b, step)
        except RecordError as e:
            out.append({"step": step, "set": None, "created": None, "from": [], "problems": [str(e)]})
            continue
        if man is None:
            continue
        out.append(
            {
                "step": step,
                "set": man.set,
                "created": man.created,
                "from": sorted({m.set for m in man.members.values()}),
                "problems": problems,
            }
        )
    return out


def describe(s: dict[str, Any]) -> str:
    """A set as a reader says it read it: "footprint set X (2 files from sets X, Y)"."""
    if s["set"] is None:
        return f"{s['step']}: {s['problems'][0]}"
    older = [x for x in s["from"] if x != s["set"]]
    also = f"; members kept from set(s) {', '.join(older)}" if older else ""
    bad = f"; {len(s['problems'])} member(s) not as written: {s['problems'][0]}" if s["problems"] else ""
    return f"{s['step']} set {s['set']} ({s['created']}{also}{bad})"
