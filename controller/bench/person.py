"""`bench --suite person`: the simulated person (hardware/sim/person.py) plays solo games, one per
seed and skill, so that a match's opponent strength means something: how high a tower a person of
each skill builds before it falls or no block will come out.

A person's game: each turn the person plays through the physics as in a match, then the 10 s
settling window runs; the tower fell if a block other than the one moved came down 2 cm or more
during the turn or its window (the rules' strict reading, as the fast game decides it). A turn is
legal when exactly one block left a legal source for the place the rules give it. The figures are
the game benchmark's (controller/bench/game.py), one row per skill.
"""

from __future__ import annotations

import time
from typing import Callable

from controller.bench.game import GameRecord, TurnRecord
from controller.wording import ILLEGAL_MOVE, MOVE_CAP, NO_BLOCK_OUT
from planning.game.rules import check_move
from planning.game.rules.options import SETTLING_WINDOW_S
from planning.game.tower import TowerError, TowerState

SKILLS = (0.3, 0.7, 1.0)
TURN_LIMIT_S = 600.0          # world time; a turn this long is a stuck person, reported as such


def label(skill: float) -> str:
    return f"person {skill:g}"


def play_person_game(cell, seed: int, skill: float, max_turns: int | None) -> GameRecord:
    """One solo game of the simulated person at `skill` on the tower drawn from `seed`."""
    from hardware.sim.ground_truth import GroundTruth
    from hardware.sim.person import SimPerson
    from hardware.sim.skill import Skill
    from hardware.sim.world import SimWorld

    started = time.monotonic()
    world = SimWorld(cell, seed, markers=False)
    try:
        person = SimPerson(world, Skill(skill), seed)
        truth = GroundTruth(world)
        game = GameRecord(label(skill), seed, "person", truth.tower_state().stories(), ended_by="")
        while max_turns is None or len(game.turns) < max_turns:
            turn = _turn(world, person, truth, len(game.turns) + 1)
            game.turns.append(turn)
            if turn.cause:
                game.ended_by = turn.cause.split(":")[0]   # the kind; the turn keeps the detail
                break
            game.stories = turn.stories
        game.ended_by = game.ended_by or MOVE_CAP
    finally:
        world.close()
    game.stories = game.stories or game.start_stories
    game.wall_s = round(time.monotonic() - started, 1)
    return game


def _turn(world, person, truth, number: int) -> TurnRecord:
    try:
        return _judged_turn(world, person, truth, number)
    except TowerError as exc:       # blocks lie in the tower's footprint, but no tower stands
        return TurnRecord(number, fell=True, cause=f"the tower fell: no tower stands ({exc})")


def _judged_turn(world, person, truth, number: int) -> TurnRecord:
    before = truth.tower_state()
    truth.reference()
    started = world.time
    person.start_turn()
    while person.state == "playing":
        person.step()
        world.step(1)
        if world.time - started > TURN_LIMIT_S:
            person.stop_turn()
            return TurnRecord(number, cause=f"the person's turn never ended: {TURN_LIMIT_S:g} s",
                              time_s=round(world.time - started, 2))
    world.step_for(SETTLING_WINDOW_S)
    played = person.last_turn
    tried = played.get("tried", [])
    record = TurnRecord(number, played.get("source"), played.get("target"), probes=len(tried),
                        probed=[t["source"] for t in tried], time_s=round(world.time - started, 2))
    taken = next((t["block"] for t in tried if t["source"] == played.get("source")), None)
    record.fell = truth.fell(moving=taken)
    if record.fell:
        record.cause = "the tower fell"
        return record
    if played.get("gave_up"):
        record.cause = NO_BLOCK_OUT
        return record
    after = truth.tower_state()
    wrong = _illegal(before, after)
    if wrong:
        record.cause = f"{ILLEGAL_MOVE}: {wrong}"
        return record
    record.legal = True
    record.stories = after.stories()
    return record


def _illegal(before: TowerState, after: TowerState) -> str | None:
    """What is wrong with the change from `before` to `after` as one move (None: nothing), as the
    simulator's truth sees the blocks lying in their slots."""
    gone = [(layer, s) for layer, s in before.blocks() if not after.has_block(layer, s)]
    new = [(layer, s) for layer, s in after.blocks() if not before.has_block(layer, s)]
    if len(gone) != 1 or len(new) != 1:
        return (f"slots emptied {_slots(gone)}, filled {_slots(new)} (a move empties one and fills "
                "one; a block out of its slot or lying crooked fills none)")
    problems = check_move(before, gone[0], new[0])
    return "; ".join(v.message for v in problems) or None


def _slots(slots) -> str:
    return "[" + ", ".join(f"layer {layer} slot {s}" for layer, s in slots) + "]"


def _person_game(job: tuple) -> GameRecord:
    cell_path, seed, skill, max_turns = job
    from controller.commands.cell_cmd import load
    return play_person_game(load(cell_path), seed, skill, max_turns)


def measure(cell_path: str, seeds: list[int], skills: tuple[float, ...] = SKILLS,
            max_turns: int | None = None, engine=None, games_path: str | None = None,
            progress: Callable[[int, int], None] | None = None) -> dict:
    """Every skill over every seed, the games given to `engine` (this process if None);
    `games_path` keeps each finished game (controller/bench/sweep.py)."""
    from controller.bench import sweep
    work = [(cell_path, seed, skill, max_turns) for skill in skills for seed in seeds]
    return sweep.measure("person", cell_path, seeds, max_turns, [label(s) for s in skills],
                         _person_game, work, lambda job: (label(job[2]), job[1]), engine,
                         games_path, progress)
