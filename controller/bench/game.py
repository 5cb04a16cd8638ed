"""`bench --suite game`: whole solo games (until the tower falls or no block will come out; a
move cap is an option), for each policy of
planning/policies.py, scored by how high the tower got, how often a turn ended legal with the
tower standing, how many test pushes a turn took and how long it took in simulated time.

`oracle` (controller/bench/oracle.py), fast mode only, is the ceiling: a player that knows each
block's true load; `oracle-relaxed` knows them too and takes any block the stability model says
the tower stands without, from any layer: the ceiling of the simulated physics.

Both modes play the product's own solo game (controller/solo.py) and turn procedure
(controller/turn/procedure.py); they differ in the hands that carry the turns out:
- fast: the benchmark's hands in an in-process simulated cell (controller/bench/fast_hands.py):
  the pushes, pulls and placing through the physics, the tower read from the simulator's ground
  truth; no arm transits, no cameras, no serial link. Turn times are the simulated time of that
  block work and the settling window, not of a robot's turn;
- full: the arm, as `jenga-robot play --solo` plays (`sim serve` in its own process, the serial
  pty, the camera streams), in real time.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Callable

import numpy as np

from controller.bench.witness import Witness, Witnessed
from controller.wording import ILLEGAL_MOVE, MOVE_CAP, NO_BLOCK_OUT
from planning.policies import POLICIES, Policy
from planning.game.rules import RuleOptions
from planning.stability import BlockDims
from planning.game.tower import TowerState, parse_stories

if TYPE_CHECKING:
    from controller.solo import SoloResult


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
    taken_after_all: bool = False   # a pull given up would not go back, and was taken
    wall_s: float = 0.0        # this machine's time for the turn: its cost, not its outcome
    forced: bool = False       # no block seemed to come out: the least-loaded one was worked
    recoveries: list = field(default_factory=list)   # the kind of each surprise got over
    notes: list = field(default_factory=list)  # what the turn gave up on and got over, in words
    error: str | None = None   # why the turn was illegal or stopped, in its words
    phase: str | None = None   # the phase under way when it ended (controller/turn/report.py)
    # from the simulator's truth (controller/bench/witness.py), where it was read: the furthest
    # any block but the one taken moved in the turn (mm), the true load on the block taken (N)
    disturbed_mm: float | None = None
    taken_load_n: float | None = None

    @property
    def moved_a_block(self) -> bool:
        """The turn ended legal with the tower standing."""
        return self.legal and not self.fell

    @property
    def forced_end(self) -> str | None:
        """How a forced move ended: taken (legal, the tower standing), fell, or illegal; None
        for a turn that was not one."""
        if not self.forced:
            return None
        return "fell" if self.fell else "taken" if self.legal else "illegal"


# The kinds of a game's ending, in the order tables give them: a fall, the rules' other endings
# (SoloResult.ending, the person suite's turn causes), a turn's error (its words name what it saw),
# the move cap.
STOPPED = "stopped by a turn's error"
ENDINGS = ("fell", NO_BLOCK_OUT, ILLEGAL_MOVE, STOPPED, MOVE_CAP)


@dataclass
class GameRecord:
    policy: str
    seed: int
    mode: str
    start_stories: str = ""
    turns: list[TurnRecord] = field(default_factory=list)
    stories: str = ""          # after the last legal turn with the tower standing
    ended_by: str = MOVE_CAP    # or how the game ended (SoloResult.ending)
    wall_s: float = 0.0        # this machine's time for the game: its cost, not its outcome

    @property
    def blocks_moved(self) -> int:
        return sum(1 for t in self.turns if t.moved_a_block)

    @property
    def ending(self) -> str:
        """How the game ended, by kind: `ended_by` without its detail, so a table of many games
        can count them (a turn's error names its slots)."""
        if self.turns and self.turns[-1].fell:
            return "fell"
        return next((kind for kind in (NO_BLOCK_OUT, ILLEGAL_MOVE, MOVE_CAP)
                     if self.ended_by.startswith(kind)), STOPPED)

    def outcome(self) -> dict:
        """The game without its costs: what the seed, the policy and the code decide, the same
        wherever the game ran."""
        game = asdict(self)
        del game["wall_s"]
        for turn in game["turns"]:
            del turn["wall_s"]
        return game

    @classmethod
    def from_dict(cls, data: dict) -> GameRecord:
        """A record as `asdict` wrote it (keys it does not know, such as blocks_moved, ignored)."""
        names = {f.name for f in fields(cls)} - {"turns"}
        turn_names = {f.name for f in fields(TurnRecord)}
        return cls(**{k: v for k, v in data.items() if k in names},
                   turns=[TurnRecord(**{k: v for k, v in t.items() if k in turn_names})
                          for t in data.get("turns", [])])


def stories_value(text: str) -> float:
    layers, extra = parse_stories(text)
    return layers + extra / 3


# --- the games ------------------------------------------------------------------------------------

def play_fast_game(cell, seed: int, policy_name: str, max_turns: int | None) -> GameRecord:
    """One solo game played by the product's turn procedure with the benchmark's fast hands, the
    tower drawn from `seed`."""
    from controller.bench.fast_hands import FastHands
    from controller.solo import play_game
    from controller.turn.procedure import Player
    from hardware.sim.world import SimWorld

    started = time.monotonic()
    world = SimWorld(cell, seed, markers=False, probe_stage=True)
    try:
        hands = FastHands(world)
        start = hands.bench.truth.tower_state().stories()
        player = Player(hands, BlockDims.of(cell.blocks), RuleOptions(),
                        fast_policy(policy_name, seed, hands))
        witness = Witness(lambda: hands.bench.truth.document(loads=True))
        ends = [time.monotonic()]

        def turn_ended(report) -> None:
            ends.append(time.monotonic())
            witness.turn_ended(report.source)

        result = play_game(player, max_turns, on_turn=turn_ended)
        if len(ends) <= len(result.turns):      # a turn an error stopped, kept without on_turn
            ends.append(time.monotonic())
    finally:
        world.close()
    return game_record(result, policy_name, seed, "fast", start, bool(hands.rode),
                       time.monotonic() - started, list(np.diff(ends)), witness.turns)


def fast_policy(name: str, seed: int, hands) -> Policy:
    """The policy `name` for a fast game: an oracle reads the loads through the hands' simulator."""
    from controller.bench.oracle import ORACLES, oracle_policy
    if name in ORACLES:
        return oracle_policy(name, hands.bench.truth.loads)
    return Policy(name, np.random.default_rng(seed))


def play_full_game(cell_path: str, seed: int, policy_name: str, max_turns: int | None) -> GameRecord:
    """One solo game through the product's pipeline (real time)."""
    from controller.cell_http import cell_json
    from controller.cell_link import CellLink, SimulatedCell
    from controller.commands.cell_cmd import load
    from controller.commands.play_cmd import SIM_STALL_S
    from controller.solo import play_solo

    started = time.monotonic()
    cell = load(cell_path)
    policy = Policy(policy_name, np.random.default_rng(seed))
    with SimulatedCell(seed, cell_path) as sim:
        witness = Witness(lambda: cell_json(sim.truth_url))
        with CellLink(cell, sim.serial, sim.camera_urls, stall_s=SIM_STALL_S) as link:
            result = play_solo(link, max_turns, policy=policy,
                               on_turn=lambda report: witness.turn_ended(report.source))
    return game_record(result, policy_name, seed, "full", TowerState.fresh().stories(), False,
                       time.monotonic() - started, witnessed=witness.turns)


def game_record(result: SoloResult, policy: str, seed: int, mode: str, start_stories: str,
                rode: bool, wall_s: float, turn_wall_s: list[float] = (),
                witnessed: list[Witnessed] = ()) -> GameRecord:
    """A solo game's figures. `rode`: blocks rode along on the last drawn block, so a fall while it
    was placed or settling is the pull's. `turn_wall_s`: each turn's wall time, as far as known;
    `witnessed`: what the truth says each turn did, as far as read (a turn that stopped is not)."""
    game = GameRecord(policy, seed, mode, start_stories, stories=result.stories or start_stories,
                      wall_s=round(wall_s, 1))
    for i, report in enumerate(result.turns):
        seen = witnessed[i] if i < len(witnessed) else Witnessed(None, None)
        game.turns.append(TurnRecord(
            report.number, list(report.source) if report.source else None,
            list(report.target) if report.target else None, len(report.probes),
            [[p.layer, p.slot] for p in report.probes], len(report.let_go),
            report.legal and not report.error, report.fell, time_s=round(report.duration_s, 2),
            stories=report.stories, taken_after_all=report.taken_after_all,
            wall_s=round(float(turn_wall_s[i]), 2) if i < len(turn_wall_s) else 0.0,
            forced=report.forced, recoveries=[r["kind"] for r in report.recoveries],
            notes=list(report.notes),
            error=report.error, phase=str(report.phase) if report.phase else None,
            disturbed_mm=seen.disturbed_mm, taken_load_n=seen.taken_load_n))
    if result.turns and (result.fell or result.error):
        last = game.turns[-1]
        last.fell = result.fell
        game.ended_by = result.ending(rode)
        last.cause = result.fall_cause(rode) if result.fell else game.ended_by
    return game


# --- the sweep ------------------------------------------------------------------------------------

def _fast_game(job: tuple) -> GameRecord:
    cell_path, seed, name, max_turns = job
    from controller.commands.cell_cmd import load
    return play_fast_game(load(cell_path), seed, name, max_turns)


def _full_game(job: tuple) -> GameRecord:
    return play_full_game(*job)


def measure(cell_path: str, seeds: list[int], max_turns: int | None = None, full: bool = False,
            policies: tuple[str, ...] = POLICIES, engine=None, games_path: str | None = None,
            progress: Callable[[int, int], None] | None = None) -> dict:
    """Every policy over every seed: the figures per policy, with intervals, and each pair of
    policies compared on the same seeds. Fast games go to `engine` (this process if None); full
    games are played here one at a time, as each needs the machine to itself to keep real time.
    `games_path`: a file that keeps each finished game (controller/bench/sweep.py)."""
    from controller.bench import sweep
    from controller.bench.engines import InProcess
    from controller.bench.oracle import check_mode
    check_mode(full, policies)
    work = [(cell_path, seed, name, max_turns) for name in policies for seed in seeds]
    return sweep.measure("full" if full else "fast", cell_path, seeds, max_turns, policies,
                         _full_game if full else _fast_game, work, lambda job: (job[2], job[1]),
                         InProcess() if full else engine, games_path, progress)
