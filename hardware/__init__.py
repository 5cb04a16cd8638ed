"""Hardware: cell descriptions, the simulated cell (MuJoCo), the simulated person, firmware."""
