"""The simulated cell (MuJoCo): world, ground truth, instruments, virtual firmware and servers."""

import os

# Offscreen rendering needs no display: EGL, unless a display is there to use. This must be set
# before anything imports mujoco, so it lives in the package's first import.
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
