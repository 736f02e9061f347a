"""The command line is built from a table of commands (cli/commands.py); it must offer
what the hand-written parser of main offered before (45fb26f): the same commands, and
for each the same options with their names, defaults, metavars, choices, help texts and
accepted values, and the same --help text.  tests/data/cli-commands.json is that
parser's description, written by this file (`python tests/test_cli_table.py --write`,
only when a change to the command line is meant).  Changed since 45fb26f on purpose:
a help text where there was none (footprint-report's and workloads' --kernel, study's
--jobs, aa's --lmbench), and --no-wait's help naming aa among the commands that hold a
board (made from the table's holds_board), and a literal "%%" that build-cost's and
compare's descriptions printed (argparse formats option help with %, not descriptions);
nothing else."""

import argparse
import json
import sys
from pathlib import Path

import pytest

from bringup import cli

SNAPSHOT = Path(__file__).resolve().parent / "data" / "cli-commands.json"
# values each option's type is tried on: the answers pin its range and its words
PROBES = ["0", "1", "-1", "2", "5", "2.5", "100", "101", "1000", "1001", "1024", "1025", "60000", "60001"]
PROBES += ["64", "65", "x", "nan", "", "a,b", ",,", " 5", "1_0"]
COLUMNS = "100"


def _plain(v):
    """A value as JSON: the sentinels and functions argparse holds, by what they are."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return f"<{type(v).__name__}>"


def _tries(fn) -> dict[str, str]:
    out = {}
    for s in PROBES:
        try:
            out[s] = repr(fn(s))
        except argparse.ArgumentTypeError as e:
            out[s] = f"refused: {e}"
        except (TypeError, ValueError) as e:
            out[s] = f"{type(e).__name__}"
    return out


def _options(p: argparse.ArgumentParser) -> list[dict]:
    out = []
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            continue
        out.append(
            {
                "strings": list(a.option_strings),
                "dest": a.dest,
                "action": type(a).__name__,
                "default": _plain(a.default),
                "const": _plain(a.const),
                "metavar": _plain(a.metavar),
                "choices": _plain(a.choices),
                "required": a.required,
                "nargs": _plain(a.nargs),
                "help": a.help,
                "type": None if a.type is None else _tries(a.type),
            }
        )
    return out


def describe(parser: argparse.ArgumentParser) -> dict:
    """The parser as data: its options, and each command's help, description, options and --help text."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    out: dict = {"": {"description": parser.description, "options": _options(parser), "text": parser.format_help()}}
    for name, s in sub.choices.items():
        out[name] = {
            "help": helps.get(name),
            "description": s.description,
            "options": _options(s),
            "defaults": {k: _plain(v) for k, v in s._defaults.items() if k != "fn"},
            "text": s.format_help(),
        }
    return out


@pytest.fixture
def now(monkeypatch):
    monkeypatch.setenv("COLUMNS", COLUMNS)
    return describe(cli.build_parser())


def test_the_same_commands_as_before(now):
    was = json.loads(SNAPSHOT.read_text())
    assert list(now) == list(was)


COMMANDS = list(json.loads(SNAPSHOT.read_text())) if SNAPSHOT.exists() else []


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_keeps_its_options_and_help(now, command):
    was = json.loads(SNAPSHOT.read_text())[command]
    got = now[command]
    assert [o["strings"] for o in got["options"]] == [o["strings"] for o in was["options"]]
    for g, w in zip(got["options"], was["options"], strict=True):
        assert g == w, f"{command} {g['strings'] or g['dest']}"
    assert {k: v for k, v in got.items() if k != "options"} == {k: v for k, v in was.items() if k != "options"}


def test_every_command_has_its_handler():
    p = cli.build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    for name, s in sub.choices.items():
        assert callable(s._defaults.get("fn")), name


def test_no_help_text_prints_a_doubled_percent_sign():
    p = cli.build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    shown = {name: s.format_help() for name, s in sub.choices.items()}
    assert [name for name, text in shown.items() if "%%" in text] == []
    assert "95 % interval" in shown["build-cost"]  # the description's own % stays one


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import os

    os.environ["COLUMNS"] = COLUMNS
    SNAPSHOT.write_text(json.dumps(describe(cli.build_parser()), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {SNAPSHOT}")
