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
from controller.turn.report import (NoMoveError, Phase, PhaseClock, ProbeRecord, TowerFellError,
                                    TurnError, TurnReport)
from controller.wording import GAVE_UP_WHY, grasp_tries, slot_name
from planning.looseness import LoosenessBelief, ProbeMemory
from planning.motion.contact_geometry import PLACE_GUARD_N, PLACE_OVERHANG, PUSH_THROUGH
from planning.motion.plans import PlanError
from planning.policies import NoBlock, Policy, StepKind, TurnView
from planning.game.rules import RuleOptions, check_move
from planning.stability import BlockDims
from planning.strategy import RESTORE_M, Action, placement_guards, placement_slot, set_down_ends
from planning.game.tower import layer_axis

# A block the put-back could not move, or hardly, stands about as far out as the push-through left
# it (fast seed 9: 5.0, let go for a rider, measured 21.0 and, in a second run, 20.1 mm out, under
# PUSH_THROUGH; left out, the game ended there). Within the put-back's own tolerance of that
# distance the fingers' ends still close 4 mm clear of the tower: such a block is taken after all.
TAKE_SLACK_M = RESTORE_M


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


class Turn:
    def __init__(self, player: Player, number: int):
        self.player, self.hands = player, player.hands
        self.report = TurnReport(number)
        self.hands.record_moves(self.report.moves)
        self.clock = PhaseClock(self.hands.now, self.report, player.on_phase)
        self.chooser = None

    def run(self, blocks_moved: int, watch_window: bool) -> TurnReport:
        hands, report, clock, dims = self.hands, self.report, self.clock, self.player.dims
        with clock(Phase.PERCEIVE):
            look = hands.look(blocks_moved)
        state = look.tower
        belief, report.recalled = self.player.belief(look)
        if self.player.on_belief is not None:
            self.player.on_belief(look, belief)
        while True:
            with clock(Phase.PROBE):
                chosen = self._choose(look, belief)
            with clock(Phase.PULL):
                if self._pull_out(chosen, belief):
                    break
            # A block let go may have dragged others with it (a loose block lying across it
            # rides along): look again before the next block is touched.
            with clock(Phase.PERCEIVE):
                look = hands.look(blocks_moved)
                changed = look.changed(set(state.blocks()))
                if changed:
                    raise TurnError("the tower changed while a block was put back: slots "
                                    + ", ".join(slot_name(l, s) for l, s in changed))
        report.source, report.block = chosen, look.blocks.get(chosen)
        after = state.without(*chosen)
        target = placement_slot(after, dims)
        report.target = target
        with clock(Phase.PLACE):
            others = {k: v for k, v in look.offsets.items() if k != chosen}
            press_n, align_n = placement_guards(after, dims, target, PLACE_OVERHANG, PLACE_GUARD_N,
                                                2 * PLACE_GUARD_N, others)
            ends = set_down_ends(after, dims, target, PLACE_OVERHANG, others)
            if not ends:
                raise TurnError(f"a block set down on layer {target[0]} would tip off: the layer "
                                f"below has no support under either end")
            report.released_at = hands.place(PlaceOrder(target, press_n, align_n, tuple(ends)))
        report.legal = check_move(state, chosen, target, layer_axis(target[0]),
                                  self.player.options) == []
        with clock(Phase.CLEAR):
            hands.clear()
        if not watch_window:
            return report
        with clock(Phase.SETTLE):
            try:
                final = hands.watch(report.released_at, self.player.options.window_s,
                                    blocks_moved + 1)
            except TowerFellError:
                final = None
            except TurnError as exc:          # seen standing, but not read as a tower
                report.error = str(exc)
                return report
        report.fell = final is None
        if final is not None:
            report.stories = final.tower.stories()
            problem = outcome_problem(state, final, chosen, target)
            if problem:
                report.legal, report.error = False, problem
        return report

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
                raise NoMoveError(str(exc)) from None
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
                if must_take:
                    raise TurnError(f"no testing: the block in {slot_name(*candidate)} moved and "
                                    f"would not come out, and no other may be taken")
                continue
            hands.withdraw()
            if decision.restore:
                self._restore(candidate, outcome.travel_m)
            if decision.action is Action.TAKE_BEST and self._push_through(decision.source):
                return decision.source

    def _push_through(self, source: Slot) -> bool:
        """Push `source` out at the front; a block that jams is put back and ruled out."""
        jam_n = self.chooser.jam_n(source)
        pushed = self.hands.push_through(source, jam_n)
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
        if self.player.on_note is not None:
            self.player.on_note(text)

    # --- taking -------------------------------------------------------------------------------

    def _pull_out(self, source: Slot, belief: LoosenessBelief) -> bool:
        """Pull the pushed-out block. One the fingers cannot get around, or that drags the tower
        with it (the hands slid it back in as far as they could), is put back home from the
        front and ruled out for the turn; one that dragged, for the game. One that dragged and
        will not go back is taken after all (`_take_after_all`)."""
        pulled = self._record_pull(source, self.hands.pull(source))
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
                and not self.player.options.allow_leave_displaced:
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
