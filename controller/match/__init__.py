"""A match against a person: the runner (runner.py) that plays it turn by turn, the referee
(referee.py) that rules on what the cameras saw, the opponent (opponents.py), the match's log
(log.py) and what it says of progress (progress.py, turns.py), and the report drawn from it
(report.py, plots.py)."""
