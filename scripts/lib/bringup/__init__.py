"""bringup: build, boot and measure Linux kernels for board bring-up."""

from importlib import metadata

try:
    __version__ = metadata.version("bringup")  # pyproject.toml's, the one place it is written
except metadata.PackageNotFoundError:  # run from a tree without `make deps` (PYTHONPATH=scripts/lib)
    __version__ = "unknown"
