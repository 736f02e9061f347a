"""bringup.build."""
