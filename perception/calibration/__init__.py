"""Camera calibration: intrinsics (ChArUco), extrinsics (from the tower), hand-eye, and the files."""
