"""The benchmarks' intervals (controller/bench/stats.py): bootstrap over seeds, paired between
policies. Pure numbers: properties, a coverage check, and the errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.bench import stats

values = st.lists(st.floats(-50, 50, allow_nan=False), min_size=2, max_size=30)


@given(values)
@settings(max_examples=40, deadline=None)
def test_the_interval_holds_the_games_own_mean(xs):
    found = stats.interval(stats.mean_of("x"), {"x": np.array(xs)}, resamples=500)
    assert found.value == pytest.approx(np.mean(xs))
    assert found.low - 1e-9 <= found.value <= found.high + 1e-9


@given(st.floats(-10, 10, allow_nan=False), st.integers(2, 20))
@settings(max_examples=20, deadline=None)
def test_games_all_alike_give_an_interval_of_no_width(value, n):
    found = stats.interval(stats.median_of("x"), {"x": np.full(n, value)}, resamples=200)
    assert found.low == found.value == found.high == pytest.approx(value)
    assert not stats.paired(stats.mean_of("x"), {"x": np.full(n, value)},
                            {"x": np.full(n, value)}, resamples=200).decided


@given(values, st.floats(-20, 20, allow_nan=False))
@settings(max_examples=40, deadline=None)
def test_a_policy_better_by_c_on_every_seed_is_better_by_c(xs, c):
    b = {"x": np.array(xs)}
    a = {"x": np.array(xs) + c}
    found = stats.paired(stats.mean_of("x"), a, b, resamples=300)
    assert found.value == pytest.approx(c, abs=1e-9)
    assert found.low == pytest.approx(c, abs=1e-9) and found.high == pytest.approx(c, abs=1e-9)
    if abs(c) > 1e-6 or c == 0:
        assert found.decided == (c != 0)


def test_pairing_keeps_what_a_seed_does_to_both_policies():
    # a hard seed is hard for both: the difference is steady while each policy's figure is not
    rng = np.random.default_rng(7)
    towers = rng.normal(20, 4, 40)
    a = {"x": towers + 1 + rng.normal(0, 0.3, 40)}
    b = {"x": towers}
    together = stats.paired(stats.mean_of("x"), a, b)
    apart_a = stats.interval(stats.mean_of("x"), a)
    apart_b = stats.interval(stats.mean_of("x"), b)
    assert together.decided and together.low > 0.7 and together.high < 1.3
    # the separate intervals overlap: two medians or means alone would not tell the policies apart
    assert apart_a.low < apart_b.high
    assert together.high - together.low < (apart_a.high - apart_a.low) / 5


def test_the_mean_is_covered_about_95_times_in_100_even_with_ten_games():
    rng = np.random.default_rng(11)
    trials, covered = 300, 0
    for trial in range(trials):
        sample = {"x": rng.normal(3.0, 2.0, 10)}
        found = stats.interval(stats.mean_of("x"), sample, resamples=1000, seed=trial)
        covered += found.low <= 3.0 <= found.high
    assert 0.91 <= covered / trials <= 0.98     # 0.927 here; the plain percentile interval, 0.873


def test_the_level_widens_for_few_games_and_tends_to_the_level_asked():
    assert stats.expanded(0.95, 5) > stats.expanded(0.95, 10) > stats.expanded(0.95, 100) > 0.95
    assert stats.expanded(0.95, 10_000) == pytest.approx(0.95, abs=1e-3)
    # Hesterberg's expanded level: 2 Phi(sqrt(n / (n - 1)) t_{0.975, n - 1}) - 1
    assert stats.expanded(0.95, 10) == pytest.approx(0.9829, abs=2e-4)


def test_a_pooled_rate_counts_every_turn_and_a_game_without_turns_is_no_error():
    rate = stats.ratio_of("good", "turns")
    columns = {"good": np.array([1, 9, 0]), "turns": np.array([2, 10, 0])}
    assert stats.point(rate, columns) == pytest.approx(10 / 12)
    assert stats.point(rate, {"good": np.array([0, 0]), "turns": np.array([0, 0])}) == 0.0
    found = stats.interval(rate, columns, resamples=500)
    assert 0.0 <= found.low <= found.value <= found.high <= 1.0


def test_the_same_games_give_the_same_interval():
    columns = {"x": np.arange(12.0) ** 1.5}
    assert stats.interval(stats.median_of("x"), columns) == stats.interval(stats.median_of("x"),
                                                                            columns)


def test_columns_that_do_not_pair_are_refused():
    with pytest.raises(ValueError, match="same games"):
        stats.paired(stats.mean_of("x"), {"x": np.ones(3)}, {"x": np.ones(4)})
    with pytest.raises(ValueError, match="common, non-zero number"):
        stats.interval(stats.mean_of("x"), {"x": np.ones(3), "y": np.ones(2)})
    with pytest.raises(ValueError, match="common, non-zero number"):
        stats.interval(stats.mean_of("x"), {"x": np.ones(0)})
    with pytest.raises(ValueError, match="between 0 and 1"):
        stats.interval(stats.mean_of("x"), {"x": np.ones(3)}, level=95)
