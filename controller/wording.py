"""How the console and the reports count things in words."""

from __future__ import annotations


# How a solo game ends besides a fall or a turn's error, in the words the reports and the game
# tables share: the robot's games (controller/solo.py) and the simulated person's
# (controller/bench/person.py), and the benchmark's move cap.
NO_BLOCK_OUT = "no block would come out"
ILLEGAL_MOVE = "not a legal move"
MOVE_CAP = "move cap"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 turn`, `2 turns`, `0 turns` (`nouns` where adding an s is wrong)."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def slot_name(layer: int, slot: int) -> str:
    """A slot as the console and the reports name it: layers count from 1 at the bottom, the
    slots 0, 1, 2 run across the layer (docs/cell.md). Never `9.1`, which reads as a number."""
    return f"layer {layer} slot {slot}"


def probe_result(layer: int, slot: int, peak_force_n: float, travel_mm: float, p_loose: float,
                 threshold_n: float | None = None) -> str:
    """A test push in one line: the live viewer's and a recording made from the match log alike."""
    guard = f" under a {threshold_n:.2f} N guard" if threshold_n is not None else ""
    return (f"probe {slot_name(layer, slot)}: peak {peak_force_n:.2f} N{guard}, moved "
            f"{travel_mm:.1f} mm, p_loose {p_loose:.2f}")


def turn_phase(phase: str, report) -> str:
    """What the robot is doing as a phase of its turn begins (controller/turn.py), in words."""
    if phase == "place" and report.target:
        return f"placing the block on {slot_name(*report.target)}"
    return {"perceive": "looking at the tower", "probe": "testing blocks",
            "pull": "pushing the chosen block out and pulling it", "place": "placing the block on top",
            "clear": "moving clear of the tower",
            "settle": "watching the settling window"}.get(phase, phase)


def grasp_tries(touches: list[dict]) -> str:
    """How each try of a grasp that was given up went (controller/turn/arm_hands.py `_grasp`'s
    touches), in words: which way across the block the fingers were aimed and what stopped them."""
    said = []
    for touch in touches:
        aim = f"{touch.get('shift_mm', 0.0):+.1f} mm across"
        if "unplanned" in touch:
            said.append(f"{aim}: not planned ({touch['unplanned']})")
        elif touch.get("missed"):
            said.append(f"{aim}: closed on air")
        else:
            finger = {1: "the finger toward slot 2", -1: "the finger toward slot 0"}.get(
                touch.get("side"), "a finger")
            said.append(f"{aim}: {finger} met it at {touch.get('force_n', 0.0):.2f} N")
    return "; ".join(said)


# Why a pull was given up (controller/turn/hands.py GaveUp, by its value), in words.
GAVE_UP_WHY = {"approach": "the fingers could not get around it",
               "pull": "the tower came along as it was pulled",
               "slip": "it slid out of the fingers",
               "rider": "a block above came along with it"}
