"""`bench --suite game`: solo games until the tower falls or the move cap, for each policy of
planning/policies.py, scored by how high the tower got, how often a turn ended legal with the
tower standing, how many test pushes a turn took and how long it took in simulated time.

Two modes:
- fast: the benchmark's own hands in an in-process simulated cell (hardware/sim/bench_hands.py):
  the pushes, pulls and placing through the physics, the tower read from the simulator's ground
  truth; no arm transits, no cameras, no serial link. Turn times are the simulated time of that
  block work and the settling window, not of a robot's turn;
- full: the product's pipeline, as `jenga-robot play --solo` runs it (`sim serve` in its own
  process, the serial pty, the camera streams, the controller's RobotTurn), in real time.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from planning.looseness import LoosenessBelief, ProbeOutcome
from planning.policies import POLICIES, NoBlock, Policy, TurnView
from planning.rules import RuleOptions, check_move
from planning.stability import BlockDims
from planning.strategy import RESTORE_M, placement_slot
from planning.tower import TowerError, TowerState, layer_axis, parse_stories

SETTLE_S = 10.0          # the rules' settling window
DEFAULT_MAX_TURNS = 30
# A drawn block is held this long before it is placed, as the arm takes it up and over: a tower
# the pull disturbed falls in this time, and the fall is the pull's.
CARRY_S = 1.0
# Blocks that moved this far by the end of a pull rode along on the drawn block (the layer above
# it, pulled from under the top): when the block is taken away they come down with it, and the
# fall that follows is the pull's.
RODE_ALONG_M = 0.005


@dataclass
class TurnRecord:
    number: int
    source: list | None = None
    target: list | None = None
    probes: int = 0
    probed: list = field(default_factory=list)   # [layer, slot] of each test push, in order
    let_go: int = 0            # pulls given up because the tower dragged along
    legal: bool = False
    fell: bool = False
    cause: str | None = None   # why the game ended in this turn, if it did
    time_s: float = 0.0        # simulated
    stories: str = ""          # after the turn, standing


@dataclass
class GameRecord:
    policy: str
    seed: int
    mode: str
    start_stories: str = ""
    turns: list[TurnRecord] = field(default_factory=list)
    stories: str = ""          # after the last legal turn with the tower standing
    ended_by: str = "move cap"
    wall_s: float = 0.0

    @property
    def blocks_moved(self) -> int:
        return sum(1 for t in self.turns if t.legal and not t.fell)


def stories_value(text: str) -> float:
    layers, extra = parse_stories(text)
    return layers + extra / 3


# --- fast mode ------------------------------------------------------------------------------------

class _TurnEnded(Exception):
    def __init__(self, cause: str, fell: bool = False):
        super().__init__(cause)
        self.cause, self.fell = cause, fell


def play_fast_game(cell, seed: int, policy_name: str, max_turns: int) -> GameRecord:
    """One solo game with the benchmark's hands, the tower drawn from `seed`."""
    from controller.turn import PROBE_DEPTH, PULL_GUARD_N
    from controller.turn_checks import DRAG_N
    from hardware.sim.bench_hands import PROBE_SPEED, PUSH_SPEED, BenchHands
    from hardware.sim.world import SimWorld
    from planning.motion.planner import PUSH_THROUGH

    started = time.monotonic()
    world = SimWorld(cell, seed, markers=False, probe_stage=True)
    hands = BenchHands(world)
    b = cell.blocks
    dims = BlockDims(b.length.mean, b.width.mean, b.height.mean, b.mass.mean)
    policy = Policy(policy_name, np.random.default_rng(seed))
    options = RuleOptions()
    game = GameRecord(policy_name, seed, "fast")
    dragged: set = set()

    def push_home(source, travel: float, chooser) -> None:
        """Push a block moved `travel` out toward the front back from the front."""
        hands.push(source, travel, chooser.jam_n(source), PUSH_SPEED, from_front=True)

    def push_through(source, already: float, chooser) -> bool:
        r = hands.push(source, max(PUSH_THROUGH - already, 0.0), chooser.jam_n(source), PUSH_SPEED)
        if hands.fallen():
            raise _TurnEnded("push", fell=True)
        if not r.tripped:
            return True
        chooser.jammed(source)
        if already + r.block_travel > RESTORE_M:
            push_home(source, already + r.block_travel, chooser)
        return False

    for number in range(1, max_turns + 1):
        record = TurnRecord(number)
        game.turns.append(record)
        t0 = world.time
        try:
            look = hands.look(game.blocks_moved)
        except TowerError:
            record.cause, record.fell = "no tower", True
            break
        tower = look.tower
        if number == 1:
            game.start_stories = game.stories = tower.stories()
        hands.mark()
        belief = LoosenessBelief.prior(tower, look.heights)
        for key in dragged:
            belief.jammed(key)
        chooser = policy.turn(TurnView(tower, belief, dims, options, look.offsets,
                                       hands.geometry.front_end))
        try:
            source, rode = None, []
            while source is None:
                try:
                    step = chooser.next_step()
                except NoBlock:
                    raise _TurnEnded("no block would come out") from None
                candidate, pushed = step.source, False
                if step.kind == "probe":
                    r = hands.push(candidate, PROBE_DEPTH, step.guard_n, PROBE_SPEED)
                    record.probes += 1
                    record.probed.append(list(candidate))
                    if hands.fallen():
                        raise _TurnEnded("probe", fell=True)
                    outcome = ProbeOutcome(*candidate, r.peak_force_n, r.block_travel, r.tripped,
                                           step.guard_n)
                    belief.update(outcome)
                    decision = chooser.probed(outcome, record.probes)
                    if decision.action == "take":
                        pushed = push_through(candidate, r.block_travel, chooser)
                    else:
                        if decision.restore:
                            push_home(candidate, r.block_travel, chooser)
                        if decision.action == "take_best":
                            candidate = decision.source
                            pushed = push_through(candidate, 0.0, chooser)
                else:
                    pushed = push_through(candidate, 0.0, chooser)
                if not pushed:
                    continue
                pull = hands.pull(candidate, PULL_GUARD_N, DRAG_N)
                hands.wait(CARRY_S)
                if hands.fallen(hands.held):
                    raise _TurnEnded("pull", fell=True)
                if pull.came:
                    source = candidate
                    rode = [blk for blk in hands.truth.displaced(RODE_ALONG_M) if blk != hands.held]
                    continue
                record.let_go += 1
                dragged.add(candidate)
                chooser.jammed(candidate)
                push_home(candidate, PUSH_THROUGH + pull.drawn_m, chooser)
                if hands.fallen():
                    raise _TurnEnded("push back after a let-go", fell=True)
            target = placement_slot(tower.without(*source), dims)
            record.source, record.target = list(source), list(target)
            hands.place(target)
            dragged_along = "pull (blocks rode along on the drawn one)"
            if hands.fallen():
                raise _TurnEnded(dragged_along if rode else "place", fell=True)
            hands.wait(SETTLE_S)
            if hands.fallen():
                raise _TurnEnded(dragged_along if rode else "settling window", fell=True)
            expected = tower.moved(source, target)
            try:
                seen = hands.look(expected.blocks_moved).tower
            except TowerError:
                raise _TurnEnded("tower disturbed", fell=True) from None
            if seen.layers != expected.layers:
                raise _TurnEnded("tower disturbed")
            record.legal = not check_move(tower, source, target, layer_axis(target[0]), options)
            if not record.legal:
                raise _TurnEnded("illegal move")
            record.stories = game.stories = seen.stories()
        except _TurnEnded as end:
            record.cause, record.fell = end.cause, end.fell
        finally:
            record.time_s = round(world.time - t0, 2)
        if record.cause:
            game.ended_by = ("fell: " if record.fell else "") + record.cause
            break
    world.close()
    game.wall_s = round(time.monotonic() - started, 1)
    return game


# --- full mode ------------------------------------------------------------------------------------

def play_full_game(cell_path: str, seed: int, policy_name: str, max_turns: int) -> GameRecord:
    """One solo game through the product's pipeline (real time)."""
    from controller.cell_link import CellLink, SimulatedCell
    from controller.commands.cell_cmd import load
    from controller.commands.play_cmd import SIM_STALL_S
    from controller.solo import play_solo

    started = time.monotonic()
    cell = load(cell_path)
    game = GameRecord(policy_name, seed, "full")
    policy = Policy(policy_name, np.random.default_rng(seed))
    with SimulatedCell(seed, cell_path) as sim:
        with CellLink(cell, sim.serial, sim.camera_urls, stall_s=SIM_STALL_S) as link:
            game.start_stories = game.stories = TowerState.fresh().stories()
            result = play_solo(link, max_turns, policy=policy)
    for report in result.turns:
        record = TurnRecord(report.number, list(report.source) if report.source else None,
                            list(report.target) if report.target else None, len(report.probes),
                            [[p.layer, p.slot] for p in report.probes], len(report.let_go),
                            report.legal and not report.error, report.fell,
                            time_s=round(report.duration_s, 2), stories=report.stories)
        game.turns.append(record)
    if result.turns and (result.fell or result.error):
        last = game.turns[-1]
        last.fell = result.fell
        last.cause = "settling window" if result.turns[-1].fell else (result.error or "fell")
        game.ended_by = ("fell: " if result.fell else "") + last.cause
    game.stories = result.stories or game.stories
    game.wall_s = round(time.monotonic() - started, 1)
    return game


# --- figures --------------------------------------------------------------------------------------

def summarise(games: list[GameRecord]) -> dict:
    """The figures of one policy over its games."""
    stories = [stories_value(g.stories) for g in games]
    turns = [t for g in games for t in g.turns]
    good = [t for t in turns if t.legal and not t.fell]
    causes = Counter(t.cause for t in turns if t.fell)
    return {
        "games": len(games),
        "stories_median": round(float(np.median(stories)), 2),
        "stories_max": round(float(max(stories)), 2),
        "blocks_moved_median": float(np.median([g.blocks_moved for g in games])),
        "extraction_success": round(len(good) / len(turns), 3) if turns else 0.0,
        "probes_per_turn": round(float(np.mean([t.probes for t in turns])), 2) if turns else 0.0,
        "turn_time_s_median": round(float(np.median([t.time_s for t in good])), 1) if good else None,
        "falls_by_cause": dict(sorted(causes.items())),
        "ended_by": dict(sorted(Counter(g.ended_by for g in games).items())),
        "games_detail": [{**asdict(g), "blocks_moved": g.blocks_moved} for g in games],
    }


def _fast_game(job: tuple) -> GameRecord:
    cell_path, seed, name, max_turns = job
    from controller.commands.cell_cmd import load
    return play_fast_game(load(cell_path), seed, name, max_turns)


def measure(cell_path: str, seeds: list[int], max_turns: int, full: bool = False,
            policies: tuple[str, ...] = POLICIES, jobs: int = 1,
            progress: Callable[[int, int], None] | None = None) -> dict:
    """Every policy over every seed; the figures per policy under `policies`. Fast games run
    `jobs` at a time, each in its own process (they share nothing); full games one at a time,
    as each needs the machine to itself to keep real time."""
    started = time.monotonic()
    out = {"mode": "full" if full else "fast", "seeds": seeds, "max_turns": max_turns,
           "policies": {}}
    work = [(cell_path, seed, name, max_turns) for name in policies for seed in seeds]
    games: list[GameRecord] = []
    if full:
        for job in work:
            games.append(play_full_game(*job))
            if progress:
                progress(len(games), len(work))
    else:
        import concurrent.futures
        import multiprocessing
        context = multiprocessing.get_context("spawn")   # no MuJoCo state shared by a fork
        with concurrent.futures.ProcessPoolExecutor(max(1, jobs), mp_context=context) as pool:
            for future in concurrent.futures.as_completed([pool.submit(_fast_game, j) for j in work]):
                games.append(future.result())
                if progress:
                    progress(len(games), len(work))
    for name in policies:
        out["policies"][name] = summarise(sorted((g for g in games if g.policy == name),
                                                 key=lambda g: g.seed))
    out["wall_s"] = round(time.monotonic() - started, 1)
    return out
