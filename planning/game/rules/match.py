"""A match of several rounds under one of the four scoring systems of RULES.md.

- round wins: 1 point to each round's winner; first to `target_points` wins.
- penalty total: 1 penalty point to each round's loser; after `rounds` rounds the lowest total wins.
- survival: 1 point per legal turn completed; after `rounds` rounds the highest total wins.
- team: 1 point to the team whose member made the last successful move (the round's winner); first
  team to `target_points` wins. Teams alternate moves and teammates take turns.

Starting player: rotates every counted round (round k starts with participant k); a void round is
replayed with the same starter. Decision on ties at the end of a scheduled match: a playoff, i.e.
extra rounds among the tied players only, scored the same way, until one of them leads.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any

from planning.game.rules.options import RuleOptions
from planning.game.rules.round import RoundReferee, RoundResult, RoundStatus
from planning.game.rules.turn_order import rotated, team_relay_sequence


class Scoring(Enum):
    ROUND_WINS = "round_wins"
    PENALTY_TOTAL = "penalty_total"
    SURVIVAL = "survival"
    TEAM = "team"


@dataclass(frozen=True)
class MatchConfig:
    """`players` in seating order (the first builds the first tower). `teams` only for TEAM scoring;
    then `players` is every team member. `rounds` for penalty total and survival, `target_points`
    for round wins and team."""

    players: tuple[str, ...]
    scoring: Scoring = Scoring.ROUND_WINS
    target_points: int = 3
    rounds: int = 3
    teams: tuple[tuple[str, ...], ...] = ()
    options: RuleOptions = field(default_factory=RuleOptions)

    def __post_init__(self) -> None:
        if len(set(self.players)) != len(self.players) or not self.players:
            raise ValueError(f"players must be distinct names, got {list(self.players)}")
        if self.scoring is Scoring.TEAM:
            members = [p for team in self.teams for p in team]
            if len(self.teams) < 2 or sorted(members) != sorted(self.players):
                raise ValueError("team scoring needs at least two teams that together hold every "
                                 "player exactly once")
        elif self.teams:
            raise ValueError(f"teams are only for team scoring, not {self.scoring.value}")
        if self.target_points < 1 or self.rounds < 1:
            raise ValueError("target_points and rounds must be at least 1")

    def to_json(self) -> dict[str, Any]:
        return {"players": list(self.players), "scoring": self.scoring.value,
                "target_points": self.target_points, "rounds": self.rounds,
                "teams": [list(team) for team in self.teams], "options": asdict(self.options)}

    @classmethod
    def from_json(cls, obj: Any) -> MatchConfig:
        """The inverse of `to_json`; ValueError naming what is wrong."""
        if not isinstance(obj, dict):
            raise ValueError(f"a match configuration is an object, got {obj!r}")
        known = {f.name for f in fields(RuleOptions)}
        options = obj.get("options", {})
        if not isinstance(options, dict) or set(options) - known:
            raise ValueError(f"unknown rule options: {sorted(set(options) - known)}"
                             if isinstance(options, dict) else "\"options\" must be an object")
        try:
            return cls(players=tuple(obj["players"]), scoring=Scoring(obj.get("scoring", "round_wins")),
                       target_points=int(obj.get("target_points", 3)), rounds=int(obj.get("rounds", 3)),
                       teams=tuple(tuple(team) for team in obj.get("teams", ())),
                       options=RuleOptions(**options))
        except KeyError as exc:
            raise ValueError(f"a match configuration needs {exc.args[0]!r}") from None
        except TypeError as exc:
            raise ValueError(f"bad match configuration: {exc}") from None

    @property
    def sides(self) -> tuple[tuple[str, ...], ...]:
        """Who scores together: each team, or each player alone."""
        return self.teams if self.scoring is Scoring.TEAM else tuple((p,) for p in self.players)


def side_name(side: tuple[str, ...]) -> str:
    return "+".join(side)


class Match:
    """Scores rounds as they finish and says who starts the next one, whether the match is over, and
    who won it."""

    def __init__(self, config: MatchConfig):
        self.config = config
        self.results: list[RoundResult] = []
        self.scores = {side_name(s): 0 for s in config.sides}
        self._counted = 0         # rounds that counted (void rounds do not)
        self._contenders = list(config.sides)  # shrinks to the tied sides in a playoff
        self._playoff_from = None  # counted-round index where the playoff began

    # --- who plays next -----------------------------------------------------------------------

    @property
    def in_playoff(self) -> bool:
        return self._playoff_from is not None

    def participants(self) -> list[str]:
        return [p for side in self._contenders for p in side]

    def turn_sequence(self) -> list[str]:
        """Turn order for the next round, starting with its first mover."""
        k = self._counted
        if self.config.scoring is Scoring.TEAM:
            sides = rotated(self._contenders, k)
            teams = [rotated(team, k // len(sides)) for team in sides]
            return team_relay_sequence(teams)
        return rotated(self.participants(), k)

    def starting_player(self) -> str:
        return self.turn_sequence()[0]

    def new_round(self) -> RoundReferee:
        """A referee for the next round, with the right players, order and options."""
        if self.is_over:
            raise RuntimeError("the match is over")
        return RoundReferee(self.participants(), self.config.options, sequence=self.turn_sequence())

    # --- scoring ------------------------------------------------------------------------------

    def record(self, result: RoundResult) -> None:
        """Score a finished round (fell, forfeit or void)."""
        if self.is_over:
            raise RuntimeError("the match is over; no more rounds are scored")
        if result.status is RoundStatus.IN_PLAY:
            raise ValueError("only a finished round can be scored")
        self.results.append(result)
        if result.status is RoundStatus.VOID:
            return  # replayed with the same starter
        self._counted += 1
        system = self.config.scoring
        if system in (Scoring.ROUND_WINS, Scoring.TEAM):
            if result.winner is not None:
                self.scores[self._side_of(result.winner)] += 1
        elif system is Scoring.PENALTY_TOTAL:
            if result.loser is not None:
                self.scores[self._side_of(result.loser)] += 1
        else:
            for player, turns in result.completed_turns.items():
                self.scores[self._side_of(player)] += turns
        self._maybe_start_playoff()

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def winner(self) -> str | None:
        """The winning player (or team, as `A+B`), once decided."""
        leaders = self._leaders()
        if self.config.scoring in (Scoring.ROUND_WINS, Scoring.TEAM):
            best = leaders[0]
            return side_name(best) if self.scores[side_name(best)] >= self.config.target_points else None
        if self._counted < self.config.rounds or len(leaders) > 1:
            return None
        return side_name(leaders[0])

    def standings(self) -> list[tuple[str, int]]:
        """Sides with their scores, best first."""
        lowest_wins = self.config.scoring is Scoring.PENALTY_TOTAL
        return sorted(self.scores.items(), key=lambda kv: kv[1] if lowest_wins else -kv[1])

    # --- inside -------------------------------------------------------------------------------

    def _leaders(self) -> list[tuple[str, ...]]:
        """The contenders sharing the best score."""
        pick = min if self.config.scoring is Scoring.PENALTY_TOTAL else max
        best = pick(self.scores[side_name(s)] for s in self._contenders)
        return [s for s in self._contenders if self.scores[side_name(s)] == best]

    def _maybe_start_playoff(self) -> None:
        if self.config.scoring in (Scoring.ROUND_WINS, Scoring.TEAM):
            return
        if self._counted < self.config.rounds:
            return
        leaders = self._leaders()
        if len(leaders) > 1 and not self.in_playoff:
            self._playoff_from = self._counted
        if self.in_playoff:
            self._contenders = leaders  # players who fell behind in the playoff drop out

    def _side_of(self, player: str) -> str:
        for side in self.config.sides:
            if player in side:
                return side_name(side)
        raise ValueError(f"{player!r} is not in this match")
