"""Perception: cameras, calibration, markers, block poses and the tower state, events."""
