"""What the turn does after a block was let go and put back (controller/turn/procedure.py `Turn`
is made of it): it looks again, pushes home the neighbours the let-go carried out and the block
itself when its slot then reads empty, and plays the tower as it is now when it changed anyway.
"""

from __future__ import annotations

from controller.turn.checks import moved_out
from controller.turn.hands import Look, Slot
from controller.turn.report import Recovery
from controller.wording import slot_name
from planning.looseness import LoosenessBelief
from planning.motion.contact_geometry import PUSH_THROUGH
from planning.motion.plans import PlanError
from planning.strategy import RESTORE_M

# A let-go that carried out more blocks than this moved the tower above as a whole (fast seed 2:
# 14 blocks more than 1 mm; each pushed back alone shoved the others, and the tower fell): they
# are left, and the turn goes on with the tower as it is. One or two are riders, put back.
RESTORE_NEIGHBOURS = 2
# A block let go and put back whose slot then reads empty still sticks out at the front, further
# than the cameras (which see the back ends) can read its recessed back face: it is pushed home
# again from the front, the fingertip coming in from this far out (m) and feeling for its face
# (make play seed 1: layer 12 slot 0 left so, read empty, and the next move's pull met it).
LOST_OUT_M = PUSH_THROUGH + 0.02


class LetGoAftermath:
    """The let-go's aftermath, for `Turn`: it runs on the turn's `hands`, `player`, `chooser`
    and its `_look`, `_restore`, `_recovered`, `_note` and `_tell_belief`."""

    def _look_after_let_go(self, before: Look, belief: LoosenessBelief, blocks_moved: int,
                           let_go: Slot) -> tuple[Look, LoosenessBelief]:
        """The look after a block was let go and put back. A block the let-go carried toward
        the front (a rider) is pushed back home, as the rules ask of a block a player moved;
        a tower that changed anyway (a block carried too far to be seen in its slot) is played
        as it is now: the turn chooses again on a fresh belief, with the blocks that jammed
        still ruled out. The move is still judged against the tower at the turn's start: a
        block carried out of its slot and not put back is the rules' to judge."""
        look = self._look(blocks_moved)
        moved = self._restore_moved(before, look, let_go)
        if self._put_back_again(before, look, let_go) or moved:
            look = self._look(blocks_moved)
        changed = look.changed(set(before.tower.blocks()))
        if not changed:
            return look, belief
        self._recovered(Recovery.TOWER_CHANGED, "slots " + ", ".join(
            f"{slot_name(*k)} seen {'full' if look.occupancy.get(k) else 'empty'}"
            for k in changed) + " after a block was put back")
        fresh, _ = self.player.belief(look)
        for key in belief.stuck:
            if look.tower.has_block(*key):
                fresh.jammed(key)
        self._tell_belief(look, fresh)
        return look, fresh

    def _put_back_again(self, before: Look, look: Look, let_go: Slot) -> bool:
        """Push the block let go home again when the look after its put-back reads its slot
        empty (see LOST_OUT_M); whether it was pushed."""
        if not before.occupancy.get(let_go) or look.occupancy.get(let_go, True) \
                or self.player.options.allow_leave_displaced:
            return False
        try:
            short = self.hands.restore(let_go, LOST_OUT_M, self.chooser.jam_n(let_go))
        except PlanError as exc:
            self._note(f"{slot_name(*let_go)} reads empty after it was put back and cannot be "
                       f"reached to push it home again ({exc})")
            return False
        self._recovered(Recovery.PUT_BACK_AGAIN,
                        f"{slot_name(*let_go)} read empty after it was put back: pushed home "
                        f"again from the front" + (f", {short * 1000:.1f} mm short of home"
                                                   if short > RESTORE_M else ""))
        return True

    def _restore_moved(self, before: Look, look: Look, let_go: Slot) -> list[Slot]:
        """Push home each block seen moved toward the front (the end blocks are pulled by) by
        more than the rules' tolerance since `before`, when there are at most RESTORE_NEIGHBOURS
        of them, the block let go aside (its put-back was its own); the blocks pushed. With the
        option `allow_leave_displaced` they are left."""
        moved = {k: v for k, v in moved_out(before, look, self.hands.pulled_end).items()
                 if k != let_go}
        if not moved or self.player.options.allow_leave_displaced:
            return []
        if len(moved) > RESTORE_NEIGHBOURS:
            # the tower above slid with the block: each pushed back alone would shove the rest
            self._note(f"{len(moved)} blocks came out together with the block let go ("
                       + ", ".join(slot_name(*k) for k in sorted(moved))
                       + "): left as they are")
            return []
        for slot, out_m in moved.items():
            try:
                short = self._restore(slot, out_m)
            except PlanError as exc:
                self._note(f"{slot_name(*slot)} moved {out_m * 1000:.1f} mm out and cannot be "
                           f"reached to put it back ({exc})")
                continue
            self._recovered(Recovery.NEIGHBOUR_RESTORED,
                            f"{slot_name(*slot)} had come {out_m * 1000:.1f} mm out"
                            + (f"; {short * 1000:.1f} mm short of home" if short > RESTORE_M
                               else ""))
        return list(moved)
