"""The one exception the parsers raise.

parse/ stands alone (it imports nothing else of bringup), so it does not raise
BringupError: callers that turn input into results (the build, the report, the
CLI) turn a ParseError into their own one-line error."""


class ParseError(ValueError):
    """Input a parser cannot read; the message is one line naming the input."""
