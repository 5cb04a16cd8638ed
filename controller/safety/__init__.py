"""Keeping people safe around the arm: the monitor that slows and pauses it for a hand in the
workspace and stops it when the tower falls (monitor.py), and the retract from a fallen tower
(retract.py)."""
