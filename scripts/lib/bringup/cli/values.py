"""The command line's parser and the types of its values: each value is checked as the
command line is read, so that a bad one is one line (`bringup: error: argument --runs:
...`) before any work."""

from __future__ import annotations

import argparse
import difflib
import math
import re
from collections.abc import Callable
from typing import NoReturn

from bringup.util import paths

UNTIL_CI_DEFAULT = object()  # --until-ci without a width: stats.UNTIL_CI_PCT (a string would go through `type`)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`bringup: error: argument --runs: ...`), before any work."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"bringup: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        """argparse's, with an unknown option's likely meaning: `--kernal` (did you mean --kernel?)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}{self._meant(parsed, extras)}")
        return parsed

    def _meant(self, parsed: argparse.Namespace, extras: list[str]) -> str:
        """' (did you mean --kernel?)' for the first unknown option close to one of the command's."""
        known = list(self._option_string_actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and getattr(parsed, action.dest, None) in action.choices:
                known += list(action.choices[getattr(parsed, action.dest)]._option_string_actions)
        for word in (w.partition("=")[0] for w in extras if w.startswith("--")):
            close = difflib.get_close_matches(word, [k for k in known if k.startswith("--")], n=1, cutoff=0.6)
            if close:
                return f" (did you mean {close[0]}?)"
        return ""


def names(s: str) -> str:
    """An argparse type: A,B with at least one name (',,' or '' is a mistake, not the default),
    each once."""
    given = [n.strip() for n in s.split(",") if n.strip()]
    if not given:
        raise argparse.ArgumentTypeError(f"{paths.show(s, 40)} names nothing (give A,B)")
    twice = next((n for i, n in enumerate(given) if n in given[:i]), None)
    if twice is not None:  # a place would hold two workers; a workload would run, and count, twice
        raise argparse.ArgumentTypeError(f"{paths.show(s, 60)}: {twice!r} is named twice")
    return s


def count(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number in lo..hi."""

    def check(s: str) -> int:
        if len(s.strip().lstrip("+-")) > 30 and s.strip().lstrip("+-").isdigit():  # int() refuses thousands
            raise argparse.ArgumentTypeError(f"{paths.show(s, 40)} ({len(s.strip())} digits) is outside {lo}..{hi}")
        if not re.fullmatch(r"[+-]?[0-9]+", s):  # int() also takes ' 5', '1_000' and other scripts' digits
            raise argparse.ArgumentTypeError(f"{paths.show(s, 60)} is not a whole number (digits 0-9 only)")
        v = int(s)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v} is outside {lo}..{hi}")
        return v

    check.__name__ = "count"
    return check


def number(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: a finite number with lo < value <= hi."""

    def check(s: str) -> float:
        if not s.isascii() or "_" in s or s != s.strip():  # float() also takes '1_0', ' 5' and other scripts' digits
            raise argparse.ArgumentTypeError(f"{paths.show(s, 60)} is not a number (digits 0-9, '.', 'e')")
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{paths.show(s, 60)} is not a number") from None
        if not math.isfinite(v) or not lo < v <= hi:
            raise argparse.ArgumentTypeError(f"{s if len(s) <= 40 else paths.show(s, 40)} is outside ({lo} .. {hi}]")
        return v

    check.__name__ = "number"
    return check
