"""The rules of RULES.md as pure functions and state machines: no I/O, no physics."""

from planning.game.rules.judge import Event, judge_round, parse_round
from planning.game.rules.match import Match, MatchConfig, Scoring
from planning.game.rules.moves import (PlacementTarget, Severity, Violation, ViolationCode, check_move,
                                  check_no_testing, check_tested_blocks, legal_sources,
                                  placement_target, takeable_sources)
from planning.game.rules.options import VARIANT_NAMES, RuleOptions
from planning.game.rules.round import (Fall, Phase, RoundReferee, RoundResult, RoundStatus,
                                  RuleInputError)
from planning.game.rules.turn_order import TurnOrder, rotated, team_relay_sequence

__all__ = [
    "Event", "judge_round", "parse_round", "Match", "MatchConfig", "Scoring", "PlacementTarget",
    "Severity", "Violation", "ViolationCode", "check_move", "check_no_testing",
    "check_tested_blocks", "legal_sources", "placement_target", "takeable_sources",
    "VARIANT_NAMES", "RuleOptions", "Fall", "Phase", "RoundReferee", "RoundResult", "RoundStatus",
    "RuleInputError", "TurnOrder", "rotated", "team_relay_sequence",
]
