"""Confidence intervals for the benchmarks' figures: the bootstrap over seeds, and the paired
bootstrap for the difference between two policies played on the same seeds.

The interval is the expanded percentile interval (Hesterberg, "What teachers should know about the
bootstrap", 2015): the plain percentile interval is too narrow for a few tens of games (it held
the true mean 87 times in 100 at 10 games, at 95 % asked), so its percentiles are taken at a wider
level, as a Student t interval widens for a small sample (94 in 100 at 10 games; docs/benchmarks.md).

A figure is a statistic of per-game columns (`columns[name][seed index]`), computed for many
resamples at once: `statistic(columns)` takes each column as a (resamples, games) array and
returns one value per resample. Resampling whole games keeps a game's figures together (its
stories with its turns); resampling the same seeds for both policies of a pair keeps what a seed
does to both (a hard tower is hard for every policy), which is why a paired interval is narrower
than two separate ones. No I/O; the same games give the same intervals (a fixed generator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

Columns = Mapping[str, np.ndarray]
Statistic = Callable[[Columns], np.ndarray]

RESAMPLES = 10_000
LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    value: float          # the statistic of the games themselves
    low: float
    high: float

    @property
    def decided(self) -> bool:
        """The interval leaves zero out: the sign of a difference is settled at this level."""
        return self.low > 0 or self.high < 0

    def rounded(self, digits: int = 3) -> Interval:
        return Interval(round(self.value, digits), round(self.low, digits), round(self.high, digits))


def point(statistic: Statistic, columns: Columns) -> float:
    """The statistic of the games as they are."""
    return float(statistic({k: np.asarray(v, float)[None, :] for k, v in columns.items()})[0])


def interval(statistic: Statistic, columns: Columns, resamples: int = RESAMPLES,
             level: float = LEVEL, seed: int = 0) -> Interval:
    """The statistic with its percentile-bootstrap interval, games resampled with replacement."""
    n = _games(columns)
    pick = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    values = statistic({k: np.asarray(v, float)[pick] for k, v in columns.items()})
    return _interval(point(statistic, columns), values, level, n)


def paired(statistic: Statistic, a: Columns, b: Columns, resamples: int = RESAMPLES,
           level: float = LEVEL, seed: int = 0) -> Interval:
    """statistic(a) - statistic(b), games of the same seeds in the same order, with its paired
    percentile-bootstrap interval (each resample takes the same seeds from both)."""
    n = _games(a)
    if _games(b) != n:
        raise ValueError(f"paired columns need the same games: {n} and {_games(b)}")
    pick = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    values = (statistic({k: np.asarray(v, float)[pick] for k, v in a.items()})
              - statistic({k: np.asarray(v, float)[pick] for k, v in b.items()}))
    return _interval(point(statistic, a) - point(statistic, b), values, level, n)


def _games(columns: Columns) -> int:
    sizes = {len(v) for v in columns.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(f"columns need one common, non-zero number of games, got {sorted(sizes)}")
    return sizes.pop()


def expanded(level: float, games: int) -> float:
    """The level whose percentiles give a `level` interval for `games` games: the normal
    quantile widened by sqrt(n / (n - 1)) and Student's t with n - 1 degrees of freedom."""
    if not 0 < level < 1:
        raise ValueError(f"a confidence level is between 0 and 1, got {level}")
    if games < 2:
        return level
    from scipy.stats import norm, t
    return float(2 * norm.cdf(np.sqrt(games / (games - 1)) * t.ppf((1 + level) / 2, games - 1)) - 1)


def _interval(value: float, values: np.ndarray, level: float, games: int) -> Interval:
    tail = (1 - expanded(level, games)) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(value, float(low), float(high))


# --- statistics of columns, for any figure ---------------------------------------------------------

def median_of(name: str) -> Statistic:
    return lambda columns: np.median(columns[name], axis=-1)


def mean_of(name: str) -> Statistic:
    return lambda columns: np.mean(columns[name], axis=-1)


def ratio_of(numerator: str, denominator: str) -> Statistic:
    """sum(numerator) / sum(denominator) over the games (a pooled rate, such as legal turns over
    turns); 0 where the denominator sums to 0."""
    def statistic(columns: Columns) -> np.ndarray:
        top = np.sum(columns[numerator], axis=-1)
        bottom = np.sum(columns[denominator], axis=-1)
        return np.divide(top, bottom, out=np.zeros_like(top, dtype=float), where=bottom != 0)
    return statistic
