"""The robot's turn, written once: look at the tower, ask the policy's chooser, feel candidates with
test pushes, push the chosen block through, put back what moved and is not taken, pull it (let go
of one that drags the tower, and look again), place it on top at a right angle to the layer below,
get out of the way, and watch the settling window.

Whoever carries it out supplies the `Hands` (controller/turn/hands.py): the arm through the link
and the cameras, or the game benchmark's fast hands. `play --solo`, matches and
`bench --suite game` all play their turns here.

`Player` holds what lasts a tower (the policy, the rules, the blocks that dragged the tower, what
probes found while it still holds);
`Turn` what lasts one turn (the report, the chooser, the tower seen at its start).
"""

from __future__ import annotations

from typing import Callable

from controller.turn.checks import outcome_problem
from controller.turn.hands import GaveUp, Hands, Look, PlaceOrder, Pulled, Slot
from controller.turn.let_go import LetGoAftermath
from controller.turn.report import (HeldDropped, HeldTurned, NoMoveError, Phase, PhaseClock,
                                    PlaceMissed, ProbeRecord, Recovery, TowerFellError, TurnError,
                                    TurnReport)
from controller.wording import GAVE_UP_WHY, grasp_tries, slot_name
from planning.looseness import LoosenessBelief, ProbeMemory
from planning.motion.contact_geometry import PLACE_GUARD_N, PLACE_OVERHANG, PUSH_THROUGH
from planning.motion.plans import PlanError
from perception.observation import PerceptionError
from planning.policies import NoBlock, Policy, StepKind, TurnView
from planning.game.rules import RuleOptions, check_move
from planning.stability import BlockDims
from planning.strategy import (JAM_N, RESTORE_M, Action, forced_order, placement_guards,
                               placement_slots, set_down_ends)
from planning.game.tower import TowerState, layer_axis

# A block the put-back could not move, or hardly, stands about as far out as the push-through left
# it (fast seed 9: 5.0, let go for a rider, measured 21.0 and, in a second run, 20.1 mm out, under
# PUSH_THROUGH; left out, the game ended there). Within the put-back's own tolerance of that
# distance the fingers' ends still close 4 mm clear of the tower: such a block is taken after all.
TAKE_SLACK_M = RESTORE_M
# A look that reads no tower is taken again, this many times in all: a frame lost or frozen, a hand
# in the view, a change of light last a look or two.
LOOK_TRIES = 3


class Player:
    """The robot as a player: the policy it chooses by, the rules, and for the tower being played
    (until `new_tower`) the blocks whose pull dragged it (in the simulated cell the same blocks
    dragged at every pull, turn after turn, so they stay ruled out) and what probes found."""

    def __init__(self, hands: Hands, dims: BlockDims, options: RuleOptions = RuleOptions(),
                 policy: Policy | None = None):
        self.hands, self.dims, self.options = hands, dims, options
        self.policy = policy or Policy()
        self.dragged: set[Slot] = set()
        self.memory = ProbeMemory()     # what probes found, while the load is unchanged
        self.on_probe: Callable[[ProbeRecord], None] | None = None   # told of each probe at once
        # told as each phase of a turn begins (its name and the report so far), for the console
        self.on_phase: Callable[[str, TurnReport], None] | None = None
        # told at once of each block the turn gives up on (it jammed, could not be reached or
        # pulled), in words: a turn that ends in an error returns no report to read them from
        self.on_note: Callable[[str], None] | None = None
        # told of each turn's looseness belief as it starts (the viewer colours the tower by it)
        self.on_belief: Callable[[Look, LoosenessBelief], None] | None = None

    def play(self, number: int, blocks_moved: int = 0, watch_window: bool = True) -> TurnReport:
        """Play one turn. An error that ends it carries what was done so far as `.report`. With
        `watch_window` False the turn ends when the hands are out of the way, and whoever runs
        the match watches the settling window (the next player may close it early)."""
        turn = Turn(self, number)
        try:
            return turn.run(blocks_moved, watch_window)
        except BaseException as exc:      # Ctrl-C too: a solo game keeps the turn it stopped
            turn.report.error = str(exc) or type(exc).__name__
            exc.report = turn.report
            raise
        finally:
            self.hands.record_moves(None)   # moves after the turn are not the turn's

    def new_tower(self) -> None:
        """A new tower was built: nothing known of the old one's blocks holds."""
        self.dragged.clear()
        self.memory.clear()

    def belief(self, look: Look) -> tuple[LoosenessBelief, list[Slot]]:
        """A turn's looseness belief: the prior, what earlier probes found that still holds (the
        memory forgets the rest), and the blocks that dragged the tower ruled out; and the blocks
        whose findings were recalled."""
        belief = LoosenessBelief.prior(look.tower, look.heights)
        recalled = self.memory.recall(look.tower, belief)
        for key in self.dragged:
            belief.jammed(key)
        return belief, recalled


class Turn(LetGoAftermath):
    def __init__(self, player: Player, number: int):
        self.player, self.hands = player, player.hands
        self.report = TurnReport(number)
        self.hands.record_moves(self.report.moves)
        self.clock = PhaseClock(self.hands.now, self.report, player.on_phase)
        self.chooser = None
        self.forced_tried: set[Slot] = set()    # blocks a forced move has worked
        self.pushed_hard: set[Slot] = set()     # and pushed again up to the jam limit
        self.unreachable: set[Slot] = set()     # blocks no push-through could reach
        self.reached_from_clear = False         # those were tried again from clear of the tower
        self.blocks_moved = 0                   # before this turn: what a look mid-turn counts

    def run(self, blocks_moved: int, watch_window: bool) -> TurnReport:
        hands, report, clock = self.hands, self.report, self.clock
        self.blocks_moved = blocks_moved
        with clock(Phase.PERCEIVE):
            look = self._look(blocks_moved)
        start = look              # what the turn's move is judged against, whatever came after
        belief, report.recalled = self.player.belief(look)
        self._tell_belief(look, belief)
        while True:
            with clock(Phase.PROBE):
                chosen = self._choose(look, belief)
            with clock(Phase.PULL):
                if self._pull_out(chosen, belief):
                    break
            # A block let go may have dragged others with it (a loose block lying across it
            # rides along): look again before the next block is touched.
            with clock(Phase.PERCEIVE):
                look, belief = self._look_after_let_go(look, belief, blocks_moved, chosen)
        state = look.tower
        report.source, report.block = chosen, look.blocks.get(chosen)
        with clock(Phase.PLACE):
            try:
                report.target, report.released_at = self._place(state.without(*chosen), look,
                                                                chosen)
            except HeldDropped as exc:     # nothing left to place: the window judges the rest
                report.released_at, report.error = hands.now(), str(exc)
                self._note(str(exc))
        report.legal = report.target is not None and check_move(
            state, chosen, report.target, layer_axis(report.target[0]), self.player.options) == []
        with clock(Phase.CLEAR):
            hands.clear()
        if not watch_window:
            return report
        with clock(Phase.SETTLE):
            try:
                final = self._watch(report.released_at, blocks_moved + 1)
                if final is not None and report.target is not None:
                    final = self._judge_outcome(start, final, blocks_moved + 1)
            except TowerFellError:
                final = None
            except PerceptionError as exc:      # seen standing, but never read as a tower
                report.error = f"{report.error}; {exc}" if report.error else str(exc)
                return report
        report.fell = final is None
        if final is not None:
            report.stories = final.tower.stories()
        return report

    # --- looking ------------------------------------------------------------------------------

    def _look(self, blocks_moved: int, again: bool = False) -> Look:
        """The hands' look (`again`: see `Hands.look`); one that reads no tower (a camera's
        frame lost, a hand in the view, a change of light) is taken again, LOOK_TRIES times in
        all."""
        for attempt in range(1, LOOK_TRIES + 1):
            try:
                return self.hands.look(blocks_moved, again=again or attempt > 1)
            except PerceptionError as exc:
                if attempt == LOOK_TRIES:
                    raise
                self._recovered(Recovery.LOOKED_AGAIN, f"the look read no tower ({exc})")
        raise AssertionError("unreachable")

    def _tell_belief(self, look: Look, belief: LoosenessBelief) -> None:
        if self.player.on_belief is not None:
            self.player.on_belief(look, belief)

    def _watch(self, released_at: float, blocks_moved: int) -> Look | None:
        """The settling window; None if the tower fell. A window that closed on a look that
        reads no tower is looked at again (the arm is clear)."""
        try:
            return self.hands.watch(released_at, self.player.options.window_s, blocks_moved)
        except TowerFellError:
            return None
        except TurnError as exc:          # seen standing, but not read as a tower
            self._recovered(Recovery.OUTCOME_LOOKED_AGAIN, str(exc))
            return self._look(blocks_moved, again=True)

    def _judge_outcome(self, start: Look, final: Look, blocks_moved: int) -> Look:
        """What the window's last look shows against the move from the tower at the turn's
        `start`: a surprise (the placed block not seen, a slot changed) is looked at again, a new
        look with the arm clear, before the move is called illegal; the look that counts. Raises
        TowerFellError when that look sees the tower down."""
        report = self.report
        problem = outcome_problem(start, final, report.source, report.target)
        if problem:
            again = self._look(blocks_moved, again=True)
            still = outcome_problem(start, again, report.source, report.target)
            self._recovered(Recovery.OUTCOME_LOOKED_AGAIN, problem + (
                f"; seen again: {still}" if still else "; seen again: as the move left it"))
            final, problem = again, still
        if problem:
            report.legal, report.error = False, problem
        return final

    # --- choosing -----------------------------------------------------------------------------

    def _choose(self, look: Look, belief: LoosenessBelief) -> Slot:
        """Probe candidates until one is pushed through; returns it."""
        hands, report, options = self.hands, self.report, self.player.options
        self.chooser = chooser = self.player.policy.turn(TurnView(
            look.tower, belief, self.player.dims, options, look.offsets, hands.pulled_end))
        while True:
            try:
                step = chooser.next_step()
            except NoBlock as exc:
                return self._forced(look, belief, str(exc))
            candidate = step.source
            if step.kind is StepKind.TAKE:
                if self._push_through(candidate):
                    return candidate
                continue
            try:
                felt = hands.probe(candidate, step.guard_n)
            except PlanError as exc:  # no way for the hands to reach it: not this turn
                chooser.jammed(candidate)
                self._note(f"{slot_name(*candidate)} cannot be reached for a test push ({exc})")
                continue
            outcome = felt.outcome
            record = ProbeRecord(candidate[0], candidate[1], look.blocks.get(candidate),
                                 step.guard_n, outcome.peak_force_n, outcome.travel_m * 1000,
                                 belief.update(outcome), felt.trace)
            self.player.memory.remember(look.tower, outcome)
            report.probes.append(record)
            if self.player.on_probe is not None:
                self.player.on_probe(record)
            decision = chooser.probed(outcome, len(report.probes))
            # the no-testing variant: a block the probe moved is the one to take
            must_take = options.no_testing and outcome.travel_m > RESTORE_M
            if decision.action is Action.TAKE or must_take:
                if self._push_through(candidate):
                    return candidate
                if must_take:     # the rules' cost: no move this turn (the referee's call)
                    raise NoMoveError(f"no testing: the block in {slot_name(*candidate)} moved "
                                      f"and would not come out, and no other may be taken")
                continue
            hands.withdraw()
            if decision.restore:
                self._restore(candidate, outcome.travel_m)
            if decision.action is Action.TAKE_BEST and self._push_through(decision.source):
                return decision.source

    def _forced(self, look: Look, belief: LoosenessBelief, why: str) -> Slot:
        """No block seemed to come out, and the rules allow no pass (rule 7): the legal blocks
        are worked the least loaded first (planning/strategy.py `forced_order`: those the tower
        stands without first), each pushed through up to its force limit and pulled under the
        firmer guard of a block that must come (the hands' `insist`), until one comes. Those
        that jammed below the force the tower's model says would tip it are then pushed again up
        to the push-through's own limit. NoMoveError only when not one could be worked."""
        report, options = self.report, self.player.options
        if not report.forced:
            report.forced = True
            self._recovered(Recovery.FORCED_MOVE, f"{why}: the least loaded block is worked "
                                                  f"as a forced move")
        order = forced_order(look.tower, belief, self.player.dims, options, look.offsets,
                             self.hands.pulled_end)
        for source, jam_n in order:
            if source not in self.forced_tried:
                self.forced_tried.add(source)
                if self._push_through(source, jam_n):
                    return source
        reached = self._reach_from_clear(order)
        if reached is not None:
            return reached
        # Every block stopped short of the force the tower's model says would tip it (fast seed
        # 14 at 30 2/3 stories: none came below it). A person would push on, and so does the
        # robot: the least loaded first, up to the push-through's own limit. A fall is the
        # game's end, as the rules have it; not moving is not allowed.
        harder = [source for source, jam_n in order if jam_n < JAM_N
                  and source not in self.pushed_hard and source not in self.unreachable]
        if harder and not self.pushed_hard:
            self._note(f"no block came out below the force that might tip the tower: pushed "
                       f"again up to {JAM_N:.1f} N")
        for source in harder:
            self.pushed_hard.add(source)
            if self._push_through(source, JAM_N):
                return source
        raise NoMoveError(f"{why}, and not one legal block could be pushed out as a forced move")

    def _reach_from_clear(self, order: list[tuple[Slot, float]]) -> Slot | None:
        """Once a turn, the blocks no move could reach from where the hands stood are tried again
        from clear of the tower, after a fresh look (where the hands think blocks stick out is
        the look's again, and a block it no longer sees in its slot is not pushed): a plan fails
        at its start as readily as at its block, and a forced move whose every block was
        "unreachable" in no world time at all (tower 23) was not one made. The block that came,
        or None (the hands could not get clear either: told)."""
        if not self.unreachable or self.reached_from_clear:
            return None
        self.reached_from_clear = True
        fresh = self._look(self.blocks_moved, again=True)
        try:
            self.hands.clear()
        except PlanError as exc:
            self._note(f"the hands could not get clear of the tower ({exc})")
            return None
        again, self.unreachable = self.unreachable, set()
        self._recovered(Recovery.REACHED_FROM_CLEAR, f"{len(again)} blocks could not be reached "
                        f"from where the hands stood: tried again from clear of the tower")
        for source, jam_n in order:
            if source in again and fresh.tower.has_block(*source) \
                    and self._push_through(source, jam_n):
                return source
        return None

    def _push_through(self, source: Slot, jam_n: float | None = None) -> bool:
        """Push `source` out at the front, giving up at `jam_n` (the chooser's limit for it by
        default); a block that jams, or that no move can reach, is put back and ruled out."""
        jam_n = self.chooser.jam_n(source) if jam_n is None else jam_n
        try:
            pushed = self.hands.push_through(source, jam_n)
        except PlanError as exc:    # no way for the hands to reach it: not this turn
            self.chooser.jammed(source)
            self.unreachable.add(source)
            self._note(f"{slot_name(*source)} cannot be reached for a push-through ({exc})")
            return False
        if not pushed.jammed:
            return True
        self.chooser.jammed(source)
        self._note(f"{slot_name(*source)} jammed in the push-through (its {jam_n:.2f} N limit), "
                   f"{pushed.moved_m * 1000:.1f} mm in")
        if pushed.moved_m > RESTORE_M:
            self._restore(source, pushed.moved_m)
        return False

    def _restore(self, source: Slot, travel_m: float) -> float:
        """Put a block the turn moved back home; one left short of it is told. How far short (m)."""
        short = self.hands.restore(source, travel_m, self.chooser.jam_n(source))
        self._note(f"{slot_name(*source)} put back" + (f", but {short * 1000:.1f} mm short of home"
                                                       if short > RESTORE_M else ""))
        return short

    def _note(self, text: str) -> None:
        self.report.notes.append(text)
        if self.player.on_note is not None:
            self.player.on_note(text)

    # --- placing ------------------------------------------------------------------------------

    def _place(self, after: TowerState, look: Look, chosen: Slot) -> tuple[Slot, float]:
        """Set the held block down on top: on the best place (planning/strategy.py
        `placement_slots`), else on the next where the set-down would not land or the block
        would tip off, and when every place missed, where it lands on the first: a held block
        is never kept nor dropped. The place and the world time the hands last touched it."""
        dims = self.player.dims
        others = {k: v for k, v in look.offsets.items() if k != chosen}
        targets = placement_slots(after, dims)
        supported = {t: set_down_ends(after, dims, t, PLACE_OVERHANG, others) for t in targets}
        missed = []
        for target in targets:
            if not supported[target]:
                missed.append(f"{slot_name(*target)}: the layer below has no support under "
                              f"either end")
                continue
            try:
                return target, self.hands.place(self._order(after, target, supported[target],
                                                             others))
            except HeldTurned as exc:      # no other place would turn it back: down it goes
                self._recovered(Recovery.SET_DOWN_AS_LANDED, f"{slot_name(*target)}: {exc}")
                return target, self.hands.place(self._order(after, target, supported[target],
                                                             others, as_landed=True))
            except (PlaceMissed, PlanError) as exc:    # lifted back, or no way there: held
                missed.append(f"{slot_name(*target)}: {exc}")
                self._recovered(Recovery.PLACED_ELSEWHERE, missed[-1])
        target = next((t for t in targets if supported[t]), targets[0])
        self._recovered(Recovery.SET_DOWN_AS_LANDED, "; ".join(missed))
        return target, self.hands.place(self._order(after, target, supported[target] or (1, -1),
                                                    others, as_landed=True))

    def _order(self, after: TowerState, target: Slot, ends, others: dict,
               as_landed: bool = False) -> PlaceOrder:
        press_n, align_n = placement_guards(after, self.player.dims, target, PLACE_OVERHANG,
                                            PLACE_GUARD_N, 2 * PLACE_GUARD_N, others)
        return PlaceOrder(target, press_n, align_n, tuple(ends), as_landed)

    # --- surprises ----------------------------------------------------------------------------

    def _recovered(self, kind: Recovery, detail: str) -> None:
        """A surprise the turn got over: on the report, and told as a note."""
        self.report.recovered(kind, detail)
        self._note(f"{kind}: {detail}")

    # --- taking -------------------------------------------------------------------------------

    def _pull_out(self, source: Slot, belief: LoosenessBelief) -> bool:
        """Pull the pushed-out block. One the fingers cannot get around, or that drags the tower
        with it (the hands slid it back in as far as they could), is put back home from the
        front and ruled out for the turn; one that dragged, for the game. One that dragged and
        will not go back is taken after all (`_take_after_all`)."""
        forced = self.report.forced
        pulled = self._record_pull(source, self.hands.pull(source, PUSH_THROUGH, insist=True)
                                   if forced else self.hands.pull(source))
        if pulled.came:
            return True
        tries = f"; tries: {grasp_tries(pulled.touches)}" \
            if pulled.gave_up is GaveUp.APPROACH and pulled.touches else ""
        rode = "".join(f"; {slot_name(*slot)} came {went * 1000:.1f} mm"
                       for slot, went in pulled.riders.items())
        slid = f"; slid back {pulled.slid_back_m * 1000:.1f} mm" if pulled.slid_back_m else ""
        self._note(f"{slot_name(*source)} let go: {GAVE_UP_WHY[pulled.gave_up]} "
                   f"({pulled.drawn_m * 1000:.1f} mm drawn, {pulled.peak_force_n:.2f} N{rode}"
                   f"{slid}){tries}")
        if pulled.gave_up is not GaveUp.APPROACH:
            self.player.dragged.add(source)
        short = self._restore(source, PUSH_THROUGH + pulled.left_out_m)
        will_not_go_back = short >= PUSH_THROUGH - TAKE_SLACK_M
        if pulled.gave_up in (GaveUp.DRAG, GaveUp.RIDER) and will_not_go_back \
                and not forced and not self.player.options.allow_leave_displaced:
            return self._take_after_all(source, short)
        self.chooser.jammed(source)
        return False

    def _record_pull(self, source: Slot, pulled: Pulled) -> Pulled:
        """Put a pull on the report: its grasp's touches, its drag, its knocks, and the block's
        let-go if it was given up."""
        self.report.touches += pulled.touches
        self.report.pull_trace = list(pulled.trace)
        self.report.pull_resumed += pulled.resumed
        if not pulled.came:
            self.report.gave_up(source, pulled.gave_up, pulled.drawn_m, pulled.peak_force_n,
                                None if pulled.gave_up is GaveUp.APPROACH else list(pulled.trace),
                                pulled.slid_back_m)
        return pulled

    def _take_after_all(self, source: Slot, out_m: float) -> bool:
        """A block given up because the tower came along with it that the put-back left `out_m`
        out, as far as a push-through leaves a block (within TAKE_SLACK_M) or further: it will
        not go back, and the rules forbid leaving it out and touching another, so it is pulled
        again from where it stands, firmly and without the look for riders, and taken. The
        fingers can close on it there clear of the tower; a block left out less than that stays
        out (a violation the rules' check reports). No look comes first: the cameras would read the block out of its
        slot, and the turn is committed to this block. One that will not come either is let go
        (slid back as far as it goes, if it was held) and ruled out."""
        pulled = self._record_pull(source, self.hands.pull(source, out_m, insist=True))
        self.report.taken_after_all = pulled.came
        if pulled.came:
            self._note(f"{slot_name(*source)} would not go back ({out_m * 1000:.1f} mm out): "
                       f"taken after all ({pulled.peak_force_n:.2f} N)")
            return True
        self._note(f"{slot_name(*source)} would not go back ({out_m * 1000:.1f} mm out) nor come "
                   f"out ({GAVE_UP_WHY[pulled.gave_up]}, {pulled.peak_force_n:.2f} N)")
        self.chooser.jammed(source)
        return False
