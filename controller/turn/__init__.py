"""The robot's turn: one procedure (procedure.py) carried out by hands (hands.py): the arm's
(arm_hands.py, running plans through arm_moves.py) or the game benchmark's fast ones; the checks
it makes (checks.py), what it reports (report.py) and the settling window's watch (settling.py).
"""
