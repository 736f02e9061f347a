"""The one exception type bringup raises for user-facing faults.

Its message is a single line that names the file, field or value at fault;
the CLI prints it as `bringup: error: <message>` and exits non-zero."""


class BringupError(Exception):
    exit_code = 2


class BuildFailed(BringupError):
    exit_code = 3


class BootFailed(BringupError):
    exit_code = 4
