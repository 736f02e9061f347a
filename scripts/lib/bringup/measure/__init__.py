"""bringup.measure."""
