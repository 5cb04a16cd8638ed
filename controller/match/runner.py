"""A match between the robot and a person, run turn by turn under the rules.

Every event is written to the match log before it is applied (MatchProgress) or acted on, so the
log always holds at least what the match has done. World time is the arm's device time (the
cameras stamp frames in the same world's time); match time is that plus the log's clock offset.

The robot's turn: it plays (controller/turn/) with the safety monitor watching, tells the person it is
their turn as soon as the arm is home, and watches its settling window; the person's first touch
(a hand in the workspace, seen by the monitor) closes the window early. The person's turn
(controller/match/person_turn.py): the robot waits for "done" and the hand gone, looks, rules on
the move it saw (controller/match/referee.py), and watches the settling window before it moves
again.
"""

from __future__ import annotations

import math
from typing import Callable

from controller.cell_link import CellLink
from controller.match.log import MatchLog
from controller.match.progress import MatchProgress
from controller.match.person_turn import SETTLE_S, PersonTurns
from controller.safety.retract import retract
from controller.safety.monitor import CLEAR_S, SafetyEvent, SafetyMonitor, SafetyWatchError
from controller.turn.arm_hands import arm_player
from controller.turn.settling import WindowEnd, watch_settling
from controller.turn.report import NoMoveError, ProbeRecord, TurnError
from controller.wording import plural, slot_name, turn_phase
from perception.observation import PerceptionError, TowerObservation
from planning.kinematics import ArmModel
from planning.motion.plans import PlanError
from planning.game.rules import Fall, Phase, ViolationCode
from planning.game.tower import TowerState

ROBOT = "robot"
TOUCH_N = 0.05              # a probe force above this is the robot's first touch
# The safety monitor's picture of the clear workspace counts blocks this far above the top as
# tower, so the blocks placed until it is next refreshed are not taken for a hand.
HEADROOM_LAYERS = 2


class MatchError(RuntimeError):
    """The match cannot go on (the robot cannot play, the cell stopped answering)."""


class MatchRunner(PersonTurns):
    def __init__(self, link: CellLink, log: MatchLog, progress: MatchProgress, person,
                 on_line: Callable[[str], None] = print):
        self.link = link
        self.log = log
        self.progress = progress
        self.person = person
        self.say = on_line
        self.options = progress.config.options
        self.robot = arm_player(link, self.options)
        self.robot.on_probe = self._probed
        self.robot.on_phase = lambda phase, report: self.say(f"  robot: {turn_phase(phase, report)}")
        self.robot.on_note = self._robot_note
        self.robot.hands.halted = lambda: "the tower fell" if self.monitor.fell_t is not None \
            else self.monitor.stuck
        self.monitor = SafetyMonitor(link, ArmModel(link.cell), on_event=self._safety)
        self.seen: TowerObservation | None = None
        self._told = False                  # the person has been told it is their turn
        self._person_done = False           # the person said done this turn (`_done`)

    # --- the match ---------------------------------------------------------------------------------

    def run(self) -> str | None:
        """Play until the match has a winner; returns it."""
        world = self.link.arm.device_time()
        last = self.progress.time if math.isfinite(self.progress.time) else world
        self._emit("clock", world_t=world, match_t=max(world, last))
        try:
            if self.progress.in_round:
                self._resume_round()
            while not self.progress.over:
                if not self.progress.in_round:
                    self._start_round()
                elif self.progress.referee.current_player == ROBOT:
                    self._robot_turn()
                else:
                    self._person_turn()
            self._emit("match_end", winner=self.progress.match.winner,
                       standings=self.progress.match.standings())
        except SafetyWatchError as exc:
            raise MatchError(str(exc)) from None
        finally:
            self.monitor.stop()
        return self.progress.match.winner

    def _start_round(self) -> None:
        if self.progress.rounds_started:
            self.person.rebuild()
            self.link.perception.new_tower()
            self.robot.new_tower()
            self._wait_world(SETTLE_S)
        self.seen = self._look()
        if self.seen.fell:
            raise MatchError("the tower is not standing: build it and start again")
        self.monitor.watch(self.seen.pose, self.seen.top_layer + HEADROOM_LAYERS)
        number = self.progress.rounds_started + 1
        self._emit("round_start", round=number, tower=self.seen.tower_state().to_json(),
                   starter=self.progress.match.starting_player())
        self.say(f"round {number}: {self.progress.match.starting_player()} starts")

    def _resume_round(self) -> None:
        """Go on with a round the log left open (the controller was stopped or killed): the tower
        set up as the log left it and checked by the cameras, then the open turn played again
        from its start, or its settling window watched to its end."""
        expected = self.progress.expected_tower()
        self.person.resume(expected)
        self._wait_world(SETTLE_S)
        seen = self._look()
        referee, open_turn = self.progress.referee, self.progress.open_turn
        cut_short = open_turn is not None and open_turn.player == referee.current_player
        where = (f"round {self.progress.rounds_started}, {referee.current_player}'s turn "
                 f"{open_turn.number if cut_short else self.progress.turns_in_round + 1}")
        if seen.fell:
            self._emit("note", text=f"resumed: {where}; the tower is down")
            self._fell(f"resumed {where}: the tower is down; the fall is "
                       f"{referee.current_player}'s", self._now())
            return
        _check_tower(seen, expected)
        self.seen = seen
        self.monitor.watch(seen.pose, seen.top_layer + HEADROOM_LAYERS)
        if referee.phase is Phase.WINDOW:
            placer = referee.current_player
            self._emit("note", text=f"resumed: {where}, in its settling window")
            self.say(f"resumed {where}, in its settling window")
            if placer == ROBOT:
                self.person.your_turn()
                self._told = True
            self._window(placer, referee.window_closes_at - self.options.window_s,
                         person_may_touch=placer == ROBOT)
            return
        if open_turn is not None and not cut_short:
            # the turn had closed (its window ran out, or the next player touched) before its
            # end, with the tower the referee accepted, made it to the log
            self._end_turn(open_turn.player, seen, keep_seen=False)
        self._emit("note", text=f"resumed: {where}" + (", played again from its start"
                                                      if cut_short else ""))
        self.say(f"resumed {where}")

    def _turn_number(self, player: str) -> int:
        """The number of `player`'s open turn: the one cut short, or a new one started now."""
        open_turn = self.progress.open_turn
        if open_turn is not None and open_turn.player == player:
            return open_turn.number
        number = self.progress.turns_in_round + 1
        self._emit("turn_start", player=player, turn=number, t=self._now())
        return number

    # --- the robot's turn --------------------------------------------------------------------------

    def _robot_turn(self) -> None:
        number = self._turn_number(ROBOT)
        seen = self._look()
        self.monitor.watch(seen.pose, seen.top_layer + HEADROOM_LAYERS)
        self.monitor.arm_at_work = True
        try:
            report = self.robot.play(number, self._blocks_moved, watch_window=False)
        except NoMoveError as exc:
            if self.monitor.fell_t is None and not self._look().fell:
                self._no_move(str(exc), seen)
                return
            self._fell_in_turn(exc, seen)
            return
        except (TurnError, PlanError, PerceptionError) as exc:
            # the match's own cameras judge a fall, the robot's hands' call or not: a fall
            # the robot caused loses it the round; a tower seen standing was not one
            if self.monitor.fell_t is None and not self._look().fell:
                self._cannot_go_on(exc, seen)
            self._fell_in_turn(exc, seen)
            return
        finally:
            self.monitor.arm_at_work = False
        if report.target is None:
            # the block fell from the fingers, and the arm cannot pick it up again: the match
            # stops, resumable (the rules' turn is not complete until a block is placed), unless
            # the block knocked the tower down
            dropped = TurnError(report.error)
            if self.monitor.fell_t is None and not self._look().fell:
                self._cannot_go_on(dropped, seen)
            self._fell_in_turn(dropped, seen)
            return
        probes = self.progress.open_turn.probes     # a turn played again after a resume: all
        released = self._match_t(report.released_at)
        touched = next((self._match_t(t) for probe in report.probes for t, f in probe.trace
                        if f > TOUCH_N), released)
        self._emit("touch", player=ROBOT, t=min(touched, released))
        self._emit("place", player=ROBOT, t=released,
                   source=list(report.source), target=list(report.target), block=report.block,
                   probes=len(report.probes), phases_s=report.phases_s,
                   moves=[m | {"start_s": self._match_t(m["start_s"]),
                               "end_s": self._match_t(m["end_s"])} for m in report.moves],
                   # the drawn block's drag, at the telemetry rate, for a recording made later
                   pull_trace=[[round(self._match_t(t), 4), round(f, 4)]
                               for t, f in report.pull_trace])
        self.say(f"robot took {slot_name(*report.source)} -> "
                 f"{slot_name(*report.target)} ({plural(probes, 'probe')}, "
                 f"{report.duration_s:.0f} s)")
        self.seen = self._look()          # the tower the person's move will be judged against
        self.person.your_turn()
        self._told = True
        self._window(ROBOT, released, person_may_touch=True)

    def _fell_in_turn(self, exc: Exception, seen: TowerObservation) -> None:
        fell_t = self.monitor.fell_t
        if fell_t is None:
            fell_t = self.link.arm.device_time()
        self.say("the tower fell: the arm retracts")
        done = retract(self.link.arm, self.robot.hands.planner, seen.top_layer + HEADROOM_LAYERS)
        self._emit("note", text=f"the arm retracted from the fallen tower: {done}")
        self._fell(f"the tower fell in the robot's turn ({exc}); the arm {done}",
                   max(self._match_t(fell_t), self.progress.time))

    def _cannot_go_on(self, exc: Exception, seen: TowerObservation) -> None:
        """A robot turn that could not go on with the tower standing (the turn gets over every
        surprise it can: this is a fault, or a fall the hands called that the cameras, looking
        again with the arm home, do not see): the arm is taken home, the tower looked at once
        more (a fall is then the robot's), and the match stops, saying why, to be resumed."""
        done = retract(self.link.arm, self.robot.hands.planner, seen.top_layer + HEADROOM_LAYERS,
                       keep_held=self.robot.hands.holding)
        self._emit("note", text=f"the robot's turn stopped ({exc}); the arm {done}")
        if self._look().fell:
            return
        raise MatchError(f"the robot cannot play its turn: {exc}; the arm {done} and the tower "
                         f"stands: resume the match to play the turn again") from None

    def _no_move(self, why: str, seen: TowerObservation) -> None:
        """The robot found no block it could attempt: it may not pass, so the round is lost
        (the arm comes home first, clear of the tower)."""
        done = retract(self.link.arm, self.robot.hands.planner, seen.top_layer + HEADROOM_LAYERS)
        message = f"the robot found no block to attempt ({why}); no passing: the round is lost"
        self.say(f"referee: {message}")
        self._emit("note", text=f"the arm went home: {done}")
        self._emit("violation", player=ROBOT, code=ViolationCode.NO_MOVE.label, message=message,
                   t=self._now())

    # --- the settling window -----------------------------------------------------------------------

    def _window(self, placer: str, released_t: float, person_may_touch: bool) -> None:
        """Watch the window after `placer` let go (match time): a fall ends the round; the next
        player's first touch (the person's, seen by the monitor) ends the window early; else it
        runs out."""
        self.say(f"  the settling window after {placer}'s block ({self.options.window_s:g} s)")
        offset = self.progress.offset_s          # match time less world time

        def touched() -> float | None:
            first = self._first_entry(released_t) if person_may_touch else None
            return None if first is None else first - offset
        settled = watch_settling(self.link, released_t - offset, self.options.window_s, touched)
        at = self._match_t(settled.at)
        if settled.end is WindowEnd.FELL:
            self._fell(f"the tower fell in the settling window after {placer}'s block", at)
        elif settled.end is WindowEnd.TOUCHED:
            self._emit("touch", player=self.person.name, t=at)
            # the person's hand is in the cameras' view now and may hide blocks: the turn ends
            # with the tower seen just before they were told to play (the robot's turn looked
            # then; a block that moved since is judged as part of the person's move)
            self._end_turn(placer, self.seen, keep_seen=True)
        else:
            self._emit("advance", t=at)
            self._end_turn(placer, settled.seen, keep_seen=person_may_touch)

    def _end_turn(self, player: str, seen: TowerObservation, keep_seen: bool) -> None:
        """`keep_seen`: the person may already be at work; the tower they start from was seen
        before they were told to play."""
        try:
            tower = seen.tower_state(self._blocks_moved + 1).to_json()
        except PerceptionError:
            tower = self.progress.tower.to_json()
        self._emit("turn_end", player=player, turn=self.progress.turns_in_round, tower=tower)
        if not keep_seen:
            self.seen = seen

    # --- seeing and time ---------------------------------------------------------------------------

    @property
    def _blocks_moved(self) -> int:
        return self.progress.tower.blocks_moved if self.progress.tower else 0

    def _look(self) -> TowerObservation:
        return self.link.observe().observation

    def _now(self) -> float:
        return self.progress.match_time(self.link.arm.device_time())

    def _match_t(self, world_t: float) -> float:
        return self.progress.match_time(world_t)

    def _wait_world(self, seconds: float) -> None:
        self.monitor.check()          # nothing is waited out with the watch blind
        until = self.link.arm.device_time() + seconds
        self.link.arm.wait_for(lambda t: t.device_time >= until, timeout_s=seconds + 10.0)

    def _first_entry(self, since: float) -> float | None:
        """Match time a hand first came into the workspace after `since`."""
        times = [self._match_t(e.frame_t) for e in self.monitor.events if e.kind == "pause"]
        return next((t for t in times if t >= since), None)

    def _last_exit(self, since: float) -> float | None:
        """Match time the hand last left the workspace after `since`: the monitor lets the arm go
        on CLEAR_S after the last frame that showed it inside."""
        events = [e for e in self.monitor.events if self._match_t(e.frame_t) >= since]
        last_in = max((i for i, e in enumerate(events) if e.kind == "pause"), default=None)
        if last_in is None:
            return None
        out = next((e for e in events[last_in + 1:] if e.kind in ("slow", "resume")), None)
        return None if out is None else self._match_t(out.frame_t) - CLEAR_S

    def _probed(self, probe: ProbeRecord) -> None:
        """Each of the robot's test pushes goes to the log as it is made, trace and all."""
        self._emit("probe", turn=self.progress.open_turn.number, layer=probe.layer,
                   slot=probe.slot, block=probe.block, threshold_n=round(probe.threshold_n, 4),
                   peak_force_n=round(probe.peak_force_n, 4), travel_mm=round(probe.travel_mm, 3),
                   p_loose=round(probe.p_loose, 4),
                   trace=[[round(self._match_t(t), 4), round(f, 4)] for t, f in probe.trace])
        self.say(f"  robot tested {slot_name(probe.layer, probe.slot)}: {probe.peak_force_n:.2f} N, "
                 f"{probe.travel_mm:.1f} mm")

    def _robot_note(self, text: str) -> None:
        """A block the robot's turn gave up on, in the log as it happens."""
        self._emit("note", text=f"robot: {text}", t=self._now())
        self.say(f"  robot: {text}")

    def _fell(self, message: str, t: float) -> None:
        self.say(message)
        self._emit("fall", what=Fall.TOWER.value, t=t)

    def _safety(self, event: SafetyEvent) -> None:
        self.log.append("note", text=f"safety: {event.kind}", t=self._match_t(event.frame_t),
                        camera=event.camera, latency_ms=round(event.latency_s * 1000, 1))

    def _emit(self, kind: str, **fields) -> dict:
        record = self.log.append(kind, **fields)
        rounds = len(self.progress.match.results)
        self.progress.apply(record)
        if len(self.progress.match.results) > rounds:
            result = self.progress.match.results[-1]
            self._emit("round_end", result=result.to_json(), reason=result.reason)
            self.say(f"round over: {result.reason}; winner {result.winner}")
        return record


def _check_tower(seen: TowerObservation, expected: TowerState | None) -> None:
    """The tower the cameras see must be the one the log left, or the match cannot go on."""
    if expected is None:
        return
    try:
        state = seen.tower_state(expected.blocks_moved)
    except PerceptionError as exc:
        raise MatchError(f"cannot make out the tower to go on with the match: {exc}") from None
    layers = max(state.top_layer, expected.top_layer)
    differ = [f"{slot_name(layer, slot)} {'full' if state.has_block(layer, slot) else 'empty'}"
              for layer in range(1, layers + 1) for slot in range(3)
              if state.has_block(layer, slot) != expected.has_block(layer, slot)]
    if differ:
        raise MatchError(f"the tower is not the one the log left (seen: {', '.join(differ)}): set "
                         f"it up as the report's last tower map shows and resume again")
