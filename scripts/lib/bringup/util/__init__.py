"""bringup.util."""
