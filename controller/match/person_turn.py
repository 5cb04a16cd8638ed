"""The person's turn of a match, as the robot runs it: it waits for "done" with the hand out of the
workspace, looks, rules on the move it saw (controller/match/referee.py) and watches the settling
window before it moves again. A fall seen while the person plays holds only if it goes on being
seen (a hand at the tower hides slots); once they are done, looks are judged against the tower
before their turn, and what stays in the workspace after "done" is judged rather than waited on.

A part of MatchRunner (controller/match/runner.py), which keeps the match, its log and its clock.
"""

from __future__ import annotations

from controller.match.referee import calls_of_one_move, judge_seen_move
from controller.match.turns import SAME_MOVE
from controller.safety.monitor import Level
from controller.wording import plural, slot_name
from perception.observation import TowerObservation
from planning.game.rules import Fall

LOOK_EVERY_S = 0.5          # world time between looks while waiting on the person
PERSON_TURN_LIMIT_S = 600.0  # a person silent this long (world time) is asked again
CONFIRM_FALL_S = 10.0       # world time a fall seen in the person's turn must go on being seen
SAY_WAITING_S = 20.0        # world time between "still the person's turn" lines
SETTLE_S = 1.0              # the tower is left this long after the hand has gone before judging
# Time the workspace may stay busy after the person said done before the robot judges what stays
# there (blocks that fell, or something left at the tower).
STAYS_AFTER_DONE_S = 10.0


class PersonTurns:
    """MatchRunner's person's turn (its state and helpers are the runner's)."""

    def _person_turn(self) -> None:
        before = self.seen or self._look()
        self._turn_number(self.person.name)
        started = self.progress.open_turn.started_t
        if not self._told:
            self.person.your_turn()
        self._told = False
        self.say(f"{self.person.name}'s turn: the robot waits and watches")
        waited = said = 0.0
        self._person_done = False
        done_at: float | None = None      # match time the person was first seen done
        asked = False                     # to take away what stays in the workspace
        let_go = False                    # dropped blocks the rules let go
        while not (self._done() and self.monitor.level is Level.CLEAR):
            self._wait_world(LOOK_EVERY_S)
            waited += LOOK_EVERY_S
            said += LOOK_EVERY_S
            if said >= SAY_WAITING_S:
                self.say(f"  still {self.person.name}'s turn ({self._now() - started:.0f} s)")
                said = 0.0
            look = self._look()
            if self._looks_fallen(before, look):
                seen_t = self._now()
                if self._fall_confirmed(before):
                    self._log_tries()
                    self._fell("the tower fell in the person's turn", seen_t)
                    return
            if waited > PERSON_TURN_LIMIT_S:
                self.person.say("still your turn")
                waited = 0.0
            if self._out_of_time(started):
                return
            if not self._done():
                continue
            done_at = self._now() if done_at is None else done_at
            if self._now() - done_at < STAYS_AFTER_DONE_S * (2 if asked else 1):
                continue
            if asked:
                # Still busy after the person was asked to clear it: blocks gone from the tower
                # beyond the moved one are taken to have fallen where their markers cannot be
                # seen. In a seed-1 match two blocks fell so and the match waited on a
                # simulated person, who clears nothing.
                lost = len(look.emptied_since(before)) - 1
                if lost > 0 and not let_go:
                    self._minor_fall(lost)
                    if not self.progress.in_round:
                        return
                    let_go = True
                continue
            asked = True
            dropped = _blocks_dropped(before, look)
            if dropped:
                self._minor_fall(dropped)
                if not self.progress.in_round:
                    return
                let_go = True
            self.person.say("take the dropped blocks off the table" if dropped else
                            "something is still at the tower: take it away so the robot can "
                            "judge your move")
            self.say(f"  {self.person.name} is done, but something stays in the workspace")
        self._log_tries()
        self._wait_world(SETTLE_S)
        after = self._look()
        move = judge_seen_move(before, after, self.options, self._blocks_moved)
        now = self._now()
        first = self._first_entry(started)
        if first is not None and self.progress.referee.touched_at is None:
            self._emit("touch", player=self.person.name, t=min(first, now))
        if move.fell:
            self._fell("the tower fell in the person's turn", now)
            return
        if not move.complete:
            self._emit("note", text=f"no move seen ({move.unclear or 'nothing changed'}); "
                                    f"asking the person again")
            self.person.your_turn()
            self._told = True
            return
        placed = min(self._last_exit(started) or now, now)
        placed = max(placed, self.progress.time)
        self._emit("place", player=self.person.name, t=placed, seen=move.to_json())
        self.say(f"person took {slot_name(*move.source)} -> "
                 + (slot_name(*move.target) if move.target else "the top, laid across"))
        for key, shift_mm in sorted(move.unsure_mm.items()):
            self._emit("note", text=f"referee, not called: {slot_name(*key)} read {shift_mm:.1f} mm "
                                    f"from where it was, but not by the same cameras both times")
        for violation, counts in calls_of_one_move(move.violations):
            self.say(f"referee: {violation.message}")
            if counts:
                self._emit("violation", player=self.person.name, code=violation.code.label,
                           message=violation.message, t=now)
            else:
                self._emit("note", text=SAME_MOVE + violation.message)
            if not self.progress.in_round:
                return
        self.seen = after
        self._window(self.person.name, placed, person_may_touch=False)

    def _minor_fall(self, blocks: int) -> None:
        """The person is done, yet blocks that fell lie in the workspace: a fall (strict play ends
        the round on any block dropped but the moved one; `continue_after_minor_fall` may let a
        few go). Blocks that dropped one look after another were never seen leaving at once, and
        they hold the safety monitor's pause: in a seed-1 match the fallen top of the tower (5
        blocks on the table) kept the match waiting 8 minutes for a clear workspace."""
        self.say(f"{plural(blocks, 'block')} dropped from the tower in the person's turn")
        self._emit("fall", what=Fall.MINOR.value, blocks=blocks, t=self._now())
        if not self.progress.in_round:
            self._log_tries()

    def _done(self) -> bool:
        """Whether the person has said they are done this turn. Kept once said: a console person's
        "done" is one Enter, read once."""
        self._person_done = self._person_done or self.person.done()
        return self._person_done

    def _looks_fallen(self, before: TowerObservation, look: TowerObservation) -> bool:
        """Whether `look` shows a fallen tower: perception's own call (which compares with the last
        look that read as a standing tower), or, once the person is done, slots emptied since the
        turn began (`TowerObservation.fell_since`). Blocks that fall one look after another empty
        too few slots from each look to the next to be called; a hand at the tower hides slots,
        and a person who is done may still have one there: the fall must go on being seen
        (`_fall_confirmed`)."""
        return look.fell or (self._done() and look.fell_since(before))

    def _fall_confirmed(self, before: TowerObservation) -> bool:
        """Whether a fall seen in the person's turn holds: every look says so for CONFIRM_FALL_S,
        or until the person is done and the workspace clear. A hand at the tower hides the
        markers and stickers of the slots behind it, which then read as emptied: in the
        simulated cell a person reaching in to draw a block was taken for three slots emptied at
        once, and the match called a fall of a standing tower (the workspace watch, which leaves
        the tower's own pixels out, saw no hand). A fallen tower never looks standing again."""
        until = self._now() + CONFIRM_FALL_S
        while self._now() < until:
            if self._done() and self.monitor.level is Level.CLEAR:
                return self._looks_fallen(before, self._look())
            self._wait_world(LOOK_EVERY_S)
            if not self._looks_fallen(before, self._look()):
                return False
        return True

    def _log_tries(self) -> None:
        """What the person says they tried (the simulated person tells; a real one does not),
        for whoever reads the log to see how a turn went wrong."""
        account = self.person.last_turn()
        if account:
            self._emit("person_tried", player=self.person.name, account=account)

    def _out_of_time(self, started: float) -> bool:
        """Timed turns: the person's time, counted from their first touch, has run out (the
        rules then end the round)."""
        limit = self.options.turn_limit_s
        first = self._first_entry(started)
        if limit is None or first is None or self._now() <= first + limit:
            return False
        self._log_tries()
        if self.progress.referee.touched_at is None:
            self._emit("touch", player=self.person.name, t=max(first, self.progress.time))
        self.say(f"the person ran out of the {limit:g} s limit")
        self._emit("advance", t=self._now())
        return not self.progress.in_round


def _blocks_dropped(before: TowerObservation, look: TowerObservation) -> int:
    """Blocks read lying on the table since `before`, but one that came from an emptied slot (the
    moved block, dropped, which the player picks up again). Slots that only read empty do not
    count: what stays at the tower may hide them (three of them are a fall: `fell_since`)."""
    emptied = look.emptied_since(before)
    from_emptied = {b.block for b in before.blocks if (b.layer, b.slot) in emptied}
    new = set(look.on_table) - set(before.on_table)
    return len(new) - min(1, len(from_emptied & new))
