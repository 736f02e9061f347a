"""bringup.boot."""
