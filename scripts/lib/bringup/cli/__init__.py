"""Command line: scripts/bringup <command> ...  (`scripts/bringup --help`).

The commands are a table (commands.py: each command once, with its help, its options and
its handler), from which build_parser() builds the parser; options that several commands
take are declared once (options.py), the types of their values in values.py.  The
handlers, grouped by step, are building.py (boards, show, build-all, build-report,
build-cost), measuring.py (boot-timing, footprint-report, workloads, study, aa) and
reading.py (report, compare, parse, import, validate, doc), with what they share in
common.py.  program.py runs one command: main()."""

from bringup.cli.commands import build_parser
from bringup.cli.program import main

__all__ = ["build_parser", "main"]
