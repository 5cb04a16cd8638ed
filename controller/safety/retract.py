"""Leaving a tower that fell: the arm retracts and stops, and never reaches in (RULES.md, Safety:
nobody tries to catch a falling tower). The fingers open where they are, so a block held in a
collapsing tower is let go rather than dragged out; the tool backs away from the tower's axis
along the table, at the height it is at, until it is clear of the footprint; it rises; then a
planned transit takes the arm home. A move that cannot be planned is not made: the arm stays
where it is, which is the safe choice among those left.
"""

from __future__ import annotations

import numpy as np

from controller.turn.arm_moves import ArmMoves
from controller.turn.report import TurnError
from firmware_bridge.errors import ArmError
from planning.collision import FINE_PARTS
from planning.motion.plans import PlanError

CLEAR_M = 0.10          # the tool ends this far outside the tower's footprint
RISE_M = 0.05
SPEED = 0.03            # m/s: slow, blocks may still be moving


def retract(arm, planner, tower_layers: int, keep_held: bool = False) -> str:
    """Take the arm out of the tower's way and home; returns what was done, for the log.
    `keep_held`: the tower stands and the fingers hold a block: they keep it (let go there, it
    would drop on the tower), and the words say it is held."""
    moves = ArmMoves(arm, planner)      # nothing halts a retract: it is how the arm stops safe
    try:
        if not keep_held:
            moves.open_fully()
        q = np.array(arm.telemetry().q_set)
        centre = planner.tower.pose.t
        # the tool's point nearest the tower (a fingertip, when it was pushing) sets how far to go
        tips = [planner.arm.fk(q, frame).t for frame in ("grasp", *planner.arm.fingertip_frames)]
        here = min(tips, key=lambda p: float(np.linalg.norm(p[:2] - centre[:2])))
        away = planner.arm.fk(q, "grasp").t[:2] - centre[:2]
        distance = float(np.linalg.norm(here[:2] - centre[:2]))
        if np.linalg.norm(away) < 1e-6:
            # straight above the tower's axis: leave toward the arm's base
            away = planner.tower.arm_base - centre[:2]
        away = away / np.linalg.norm(away)
        footprint = np.hypot(planner.tower.block_length, planner.tower.block_length) / 2
        out = max(footprint + CLEAR_M - distance, 0.0)
        done = []
        if out > 0.0:
            step = planner.straight(q, "grasp", np.array([*away * out, 0.0]),
                                    tower_layers=tower_layers, speed=SPEED, exempt=FINE_PARTS,
                                    label="retract")
            moves.run(step)
            done.append(f"backed {out * 1000:.0f} mm away from the tower")
        q = np.array(arm.telemetry().q_set)
        moves.run(planner.straight(q, "grasp", np.array([0.0, 0.0, RISE_M]),
                                   tower_layers=tower_layers, speed=SPEED, exempt=FINE_PARTS,
                                   label="rise"))
        q = np.array(arm.telemetry().q_set)
        moves.run(planner.transit(q, planner.arm.home, tower_layers=tower_layers))
        return ", ".join(done + ["rose", "went home"]
                         + (["holding the block: take it from the fingers"] if keep_held else []))
    except PlanError as exc:
        arm.stop()
        return f"stopped where it was: no safe way out could be planned ({exc})"
    except (ArmError, TurnError) as exc:
        return f"stopped: {exc}"
