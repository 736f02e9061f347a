"""bringup.parse."""
