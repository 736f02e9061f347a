"""bringup.report."""
