"""Work shared among processes: answers in order, errors as themselves, a dead worker named."""

import os
import signal

import pytest

from planning.workers import WorkerDied, Workers


class Doubler:
    def __init__(self, factor):
        if factor == 0:
            raise ValueError("factor 0 builds nothing")
        self.factor = factor


def double(built, x):
    if x < 0:
        raise KeyError(f"no negative {x}")
    return built.factor * x


def die(built, x):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("jobs", [1, 2])
def test_answers_come_in_the_order_asked_and_errors_as_themselves(jobs):
    seen = []
    with Workers(Doubler, (2,), jobs) as workers:
        assert workers.map(double, [(x,) for x in range(7)], seen.append) == [0, 2, 4, 6, 8, 10, 12]
        with pytest.raises(KeyError, match="no negative -1"):
            workers.map(double, [(1,), (-1,)])
    assert seen[-1] == 7
    with pytest.raises(ValueError, match="factor 0"), Workers(Doubler, (0,), jobs) as workers:
        workers.map(double, [(1,)])


def test_a_worker_that_dies_is_named_not_waited_for():
    with pytest.raises(WorkerDied, match="ended in the middle of a job"):
        with Workers(Doubler, (2,), 2) as workers:
            workers.map(die, [(1,)])
