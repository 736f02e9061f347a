"""Running one command: the command line read (make's on/off values as `--force=1`, --no-wait),
the checks that come before any work, the command's handler, and every way it can fail turned
into one line on standard error with its exit status (docs/errors.md)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys

from bringup.cli.commands import build_parser
from bringup.errors import BringupError
from bringup.parse.errors import ParseError
from bringup.util import paths
from bringup.util.switches import ENV_SWITCHES, NO, YES, env_switch


class _Guarded:
    """A stream (stdout, stderr) that remembers the error its last write or
    flush raised, so that main() can tell output errors from other ones."""

    def __init__(self, stream):
        self._stream = stream
        self.error: OSError | None = None

    def write(self, s):
        try:
            return self._stream.write(s)
        except OSError as e:
            self.error = e
            raise

    def flush(self):
        try:
            self._stream.flush()
        except OSError as e:
            self.error = e
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


# the variables through which a make hands its command line to the makes it starts: bringup
# runs from `make all BOARD=.. KERNEL=..` and starts Kbuild, lmbench's and busybox's makes,
# which must see their own arguments only (Kbuild would read a KERNEL= or CROSS_COMPILE= as an
# override, and a jobserver's descriptors are not ours)
MAKE_HANDOVER = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKEFILES")


def _no_empty_file_names(a: argparse.Namespace) -> None:
    """An empty FILE (make import FILE= with an empty value, '' in a script) would be read as
    the current directory ('.'): refused, naming the argument."""
    for key, what in (("file", "FILE"), ("files", "FILE"), ("map", "--map")):
        v = getattr(a, key, None)
        if v == "" or (isinstance(v, list) and "" in v):
            raise BringupError(f"{what} '': an empty file name; name the file to read")


def _kernel_ids(a: argparse.Namespace) -> None:
    """--kernel (KERNEL=) given empty, or twice: an empty id named no kernel in words that said
    so, and a kernel asked twice was measured as two (its boots counted twice)."""
    given = getattr(a, "kernel", None)
    given = given if isinstance(given, list) else []  # --kernel A --kernel B (import's and aa's are one)
    for i, k in enumerate(given):
        if not k.strip():
            raise BringupError(f"--kernel {paths.show(k, 40)}: an empty kernel id")
        if k in given[:i]:
            raise BringupError(f"--kernel {paths.show(k, 40)}: given twice; name each kernel once")


def _no_max_rounds_alone(a: argparse.Namespace) -> None:
    """--max-rounds (MAX_ROUNDS=) bounds the rounds --until-ci adds; without it, it was silently
    ignored (the rounds asked ran): refused, as LMBENCH_SHA256= without LMBENCH_SRC= is."""
    alone = getattr(a, "ci_pct_alone", None)
    if alone is not None:
        raise BringupError(
            f"CI_PCT={paths.show(alone, 40)} without UNTIL_CI=1: the width is for the rounds UNTIL_CI=1 adds "
            "(it was ignored); give UNTIL_CI=1 CI_PCT=<pct>"
        )
    if getattr(a, "max_rounds", None) is not None and getattr(a, "until_ci", None) is None:
        raise BringupError(
            f"--max-rounds {a.max_rounds} (MAX_ROUNDS=) without --until-ci (UNTIL_CI=1): it bounds only the "
            "rounds --until-ci adds; give --runs (RUNS=) for a fixed number"
        )


# on/off options as make passes them, with the variable's value (FORCE=0 must not force):
# --force=1 is --force, --force=0 is left out, any other value refused; --until-ci-if=0 also
# drops the --until-ci that UNTIL_CI= brings (Makefile, UNTIL); --build-cost-if=0 is --no-build-cost
SWITCHES = {
    "--force": "FORCE",
    "--replace": "REPLACE",
    "--until-ci-if": "UNTIL_CI",
    "--no-wait": "NO_WAIT",
    "--build-cost-if": "BUILD_COST",
}


def _environment_values() -> None:
    """Environment variables that carry values into files bringup writes, checked before any work."""
    from bringup.util import aptprivate

    for var in aptprivate.MIRROR_VARS:
        aptprivate.mirror_from_env(var)
    for var in ENV_SWITCHES:
        env_switch(var)
    from bringup.builder import sources

    sources.check_download_dirs()


def switches(argv: list[str]) -> list[str]:
    out: list[str] = []
    drop_until = False
    for i, t in enumerate(argv):
        if t == "--":
            out += argv[i:]
            break
        opt, eq, v = t.partition("=")
        if not eq or opt not in SWITCHES:
            out.append(t)
            continue
        if v.strip().lower() not in YES + NO:
            raise BringupError(
                f"{SWITCHES[opt]}={paths.show(v, 40)} ({opt}): give 1 to turn it on, or 0 (or leave it out) for off"
            )
        on = v.strip().lower() in YES
        if opt == "--until-ci-if":
            drop_until = drop_until or not on
        elif opt == "--build-cost-if":  # on by default: BUILD_COST=0 leaves it out
            if not on:
                out.append("--no-build-cost")
        elif on:
            out.append(opt)
    if drop_until:
        out = [t for t in out if t != "--until-ci" and not t.startswith("--until-ci=")]
    return out


def _parse(argv: list[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status of --help, --version or a one-line usage error."""
    try:
        args = switches(list(sys.argv[1:] if argv is None else argv))
    except BringupError as e:
        print(f"bringup: error: {one_line(str(e))}", file=sys.stderr)
        return e.exit_code
    if "--no-wait" in args[: args.index("--") if "--" in args else len(args)]:
        # anywhere before "--" (before or after the command): a measuring step refuses a busy board
        from bringup.util import lock

        os.environ[lock.NO_WAIT_ENV] = "1"
        args = [t for i, t in enumerate(args) if t != "--no-wait" or ("--" in args and i > args.index("--"))]
    try:
        return build_parser().parse_args(args)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2


def main(argv=None) -> int:
    for var in MAKE_HANDOVER:
        os.environ.pop(var, None)
    a = _parse(argv)
    if isinstance(a, int):
        return a
    out, err = _Guarded(sys.stdout), _Guarded(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        try:
            _no_empty_file_names(a)
            _kernel_ids(a)
            _no_max_rounds_alone(a)
            _environment_values()
            import bringup.targets  # noqa: F401  (the kinds of target register themselves before a board loads)

            code = a.fn(a)
            out.flush()  # output errors surface here, not at interpreter exit
            return code
        except BringupError as e:
            print(f"bringup: error: {one_line(str(e))}", file=sys.stderr)
            return e.exit_code
        except ParseError as e:
            print(f"bringup: error: {one_line(str(e))}", file=sys.stderr)
            return BringupError.exit_code
        except KeyboardInterrupt:
            print("bringup: interrupted", file=sys.stderr)
            return 130
        except OSError as e:
            if e is out.error or e is err.error:
                raise
            # a file bringup could not read or write (disk full, permissions, ...): one line
            name = e.filename or _failed_file(e)
            where = f"{name}: " if name else ""
            print(f"bringup: error: {one_line(f'{where}{e.strerror or e}')}", file=sys.stderr)
            return 1
        except Exception as e:  # a bug: one line, the traceback on request
            if os.environ.get("BRINGUP_DEBUG"):
                raise
            print(
                f"bringup: internal error: {type(e).__name__}: {one_line(str(e))} (a bug in bringup; "
                "run again with BRINGUP_DEBUG=1 for the traceback)",
                file=sys.stderr,
            )
            return 70
    except OSError as e:
        if e is not out.error and e is not err.error:
            raise
        return _output_failed(e, out, err)
    finally:
        sys.stdout, sys.stderr = out._stream, err._stream


def _failed_file(e: OSError) -> str | None:
    """The file a write or read was on when e came without a file name (a full disk in
    Path.write_text(), in f.write()): the innermost frame's Path or open file, else None."""
    import io
    from pathlib import PurePath

    tb, frames = e.__traceback__, []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        here = list(frame.f_locals.values())
        files = [getattr(v, "name", None) for v in here if isinstance(v, io.IOBase)]
        files = [f for f in files if isinstance(f, str)]
        if files:  # an open file of the innermost frame that had one
            return str(files[0])
        me = frame.f_locals.get("self")
        if isinstance(me, PurePath):  # inside Path.write_text() and the like
            return str(me)
    return None


CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(msg: str) -> str:
    """An error message as one line of plain text: each control character (a newline, an ANSI
    escape from a file name or value) written as its escape, as repr() would (\\n, \\x1b)."""
    return CONTROL.sub(lambda m: repr(m.group(0))[1:-1], msg)


def _output_failed(e: OSError, out: _Guarded, err: _Guarded) -> int:
    """Standard output or error cannot be written.  A reader that went away
    (`bringup boards | head -1`) ends bringup quietly, with the status of a tool
    killed by SIGPIPE (128 + 13); any other failure is one line on stderr."""
    for g in (out, err):
        if g.error is not None:
            # nothing more reaches a stream that failed, not even at interpreter exit
            with contextlib.suppress(OSError, ValueError):  # no file descriptor (tests)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, g._stream.fileno())
                os.close(devnull)
    if isinstance(e, BrokenPipeError):
        return 128 + signal.SIGPIPE
    name = "standard output" if e is out.error else "standard error"
    with contextlib.suppress(OSError, ValueError):  # stderr is what failed: nobody to tell
        print(f"bringup: error: cannot write to {name}: {e.strerror or e}", file=err._stream, flush=True)
    return 1
