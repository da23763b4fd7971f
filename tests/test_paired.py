"""Paired comparisons: wins, ties and losses, and the t interval of the mean difference, worked by hand."""

from __future__ import annotations

import math

import pytest

from cloudsim.run.paired import paired, t_quantile


@pytest.mark.parametrize("df, quantile", [(1, 12.7062), (2, 4.3027), (3, 3.1824), (9, 2.2622), (30, 2.0423),
                                          (1000, 1.9623)])
def test_the_t_quantile_is_the_tables(df, quantile):  # the 97.5 % column of any table of Student's t
    assert t_quantile(0.975, df) == pytest.approx(quantile, abs=5e-5)


def test_a_lower_is_better_comparison_worked_by_hand():
    # differences -1, 0, -2, -1: mean -1, sample sd sqrt(2/3), t(0.975, 3) = 3.18245
    result = paired([1, 2, 3, 4], [2, 2, 5, 5])
    assert (result.episodes, result.wins, result.ties, result.losses) == (4, 3, 1, 0)
    half = 3.182446 * math.sqrt(2 / 3) / 2
    assert result.difference == -1 and result.low == pytest.approx(-1 - half, abs=1e-5)
    assert result.high == pytest.approx(-1 + half, abs=1e-5)
    assert result.difference_pct == pytest.approx(-100 / 3.5)  # of the baseline's mean, 3.5
    assert result.verdict == "unsure"  # the interval reaches +0.30


def test_higher_is_better_turns_wins_into_losses_and_a_clear_interval_is_a_verdict():
    result = paired([1, 2, 3, 4], [2, 2, 5, 5], lower_is_better=False)
    assert (result.wins, result.ties, result.losses) == (0, 1, 3)
    clear = paired([10, 11, 12], [1, 2, 3], lower_is_better=False)  # every difference 9: no spread
    assert (clear.low, clear.high, clear.verdict) == (9, 9, "better")
    assert paired([10, 11, 12], [1, 2, 3]).verdict == "worse"


def test_one_episode_has_no_interval_and_nan_episodes_are_left_out():
    one = paired([3.0, math.nan], [2.0, 5.0])
    assert (one.episodes, one.losses, one.difference) == (1, 1, 1.0)
    assert math.isnan(one.low) and one.verdict == "unsure"
    assert paired([], []).episodes == 0
    with pytest.raises(ValueError, match="equally long"):
        paired([1, 2], [1])


def test_values_equal_up_to_rounding_tie():
    result = paired([0.1 + 0.2, 5.0], [0.3, 5.0])
    assert (result.ties, result.wins, result.losses) == (2, 0, 0)
