"""bringup.builder."""
