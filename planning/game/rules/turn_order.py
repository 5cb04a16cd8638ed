"""Who moves next: the builder first, then to the left; reversible for the reverse-direction variant;
teams alternate with teammates taking turns."""

from __future__ import annotations

from math import lcm


class TurnOrder:
    """A cycle of turns over `sequence` (player names, repeats allowed for team relays), starting at
    `sequence[0]` and walking forward until `reverse()` flips the direction."""

    def __init__(self, sequence: list[str] | tuple[str, ...]):
        if not sequence:
            raise ValueError("a turn order needs at least one player")
        self.sequence = tuple(sequence)
        self._index = 0
        self._step = 1

    @property
    def current(self) -> str:
        return self.sequence[self._index]

    @property
    def next(self) -> str:
        """The player whose turn follows the current one in the present direction."""
        return self.sequence[(self._index + self._step) % len(self.sequence)]

    @property
    def reversed(self) -> bool:
        return self._step < 0

    def advance(self) -> str:
        self._index = (self._index + self._step) % len(self.sequence)
        return self.current

    def reverse(self) -> None:
        self._step = -self._step


def rotated(players: list[str] | tuple[str, ...], start: int) -> list[str]:
    """Players in turn order when `players[start]` moves first (play passes to the left, i.e. in
    list order)."""
    start %= len(players)
    return list(players[start:]) + list(players[:start])


def team_relay_sequence(teams: list[list[str]] | tuple[tuple[str, ...], ...]) -> list[str]:
    """One full cycle of a team relay: teams alternate, and within each team members take turns.

    Teams of different sizes give a cycle long enough that each team's own rotation also wraps:
    teams (A1, A2) and (B1, B2, B3) give A1 B1 A2 B2 A1 B3 A2 B1 A1 B2 A2 B3.
    """
    if len(teams) < 2 or any(not team for team in teams):
        raise ValueError("a team game needs at least two teams, each with a player")
    rounds = lcm(*(len(team) for team in teams))
    return [team[i % len(team)] for i in range(rounds) for team in teams]
