"""bringup.model."""
