"""The project's one number check (`cloudsim.engine.checks`): what a whole and a finite number are, the words of every
message, and that a bool or NaN is refused wherever the engine, a loader or an agent asks for a number."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cloudsim.engine.checks import check_number, is_finite_number, is_whole, number_problem


@pytest.mark.parametrize("value, whole, finite", [
    (3, True, True), (np.int64(3), True, True), (-2, True, True), (True, False, False), (np.bool_(True), False, False),
    (1.5, False, True), (np.float32(2.0), False, True), (2.0, False, True), (math.nan, False, False),
    (math.inf, False, False), (-math.inf, False, False), ("1", False, False), (None, False, False),
])
def test_what_counts_as_a_whole_and_a_finite_number(value, whole, finite):
    assert (is_whole(value), is_finite_number(value)) == (whole, finite)


@pytest.mark.parametrize("value, bounds, problem", [
    (0, {"whole": True, "at_least": 1}, "must be a whole number >= 1"),
    (2.0, {"whole": True, "at_least": 1}, "must be a whole number >= 1"),  # 2.0 is a float, not a count
    (1, {"whole": True, "at_least": 1}, None),
    (1.5, {"above": 0, "at_most": 1}, "must be a finite number in (0, 1]"),
    (1.0, {"above": 0, "at_most": 1}, None),
    (0.0, {"at_least": 0, "at_most": 1}, None),
    (-0.1, {"at_least": 0, "at_most": 1}, "must be a finite number in [0, 1]"),
    (math.nan, {"above": 0}, "must be a finite number > 0"),
    (5, {"at_most": 3}, "must be a finite number in (-inf, 3]"),
    (True, {}, "must be a finite number"),
])
def test_a_problem_is_said_in_one_form(value, bounds, problem):
    assert number_problem(value, **bounds) == problem


def test_check_number_names_the_value_and_ends_with_the_hint():
    with pytest.raises(ValueError, match=r"^rate must be a finite number > 0, got -1; jobs per step$"):
        check_number("rate", -1, above=0, hint="jobs per step")
    check_number("rate", 0.5, above=0)  # nothing to say


def test_a_bool_is_never_a_count_or_a_quantity():
    from cloudsim.engine.faults import RandomFaults
    from cloudsim.engine.runner import Runner
    from cloudsim.engine.specs import TaskSpec
    from traces.load import time_scale

    with pytest.raises(ValueError, match="mtbf must be a positive number"):
        RandomFaults(mtbf=True, mttr=1.0)
    with pytest.raises(ValueError, match="instances"):
        TaskSpec(0, True, {"cpu": 1.0}, 1.0)
    with pytest.raises(ValueError, match="workers must be a whole number >= 1, got True"):
        Runner(workers=True)
    with pytest.raises(ValueError, match="a load must be a finite number > 0, got True"):
        time_scale([], None, True)
