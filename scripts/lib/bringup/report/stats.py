"""Moved to bringup.util.stats (boot timing uses it too, and boot/ does not import report/)."""

from bringup.util.stats import mann_whitney, summarize, t95

__all__ = ["mann_whitney", "summarize", "t95"]
