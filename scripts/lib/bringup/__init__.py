"""bringup: build, boot and measure Linux kernels for board bring-up."""

__version__ = "0.1.0"
