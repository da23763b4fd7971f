"""Brokers that misbehave, one way each: the user's code the tests hold cloudsim to contain (`cloudsim.engine.foreign`).

Run by reference (``path/to/hostile_brokers.py:Class``), like a user's own file. Each first schedules as
first-fit does, so that the misbehaviour comes after the run has started, at a decision the test knows.
`EXITS_AT_IMPORT` is the text of a module that ends the process when imported: a test writes it to a file.
"""

from __future__ import annotations

import os
import sys
import time

from cloudsim import Decision

EXITS_AT_IMPORT = "import sys\nsys.exit(0)  # a module that ends the process at import\n"


class FirstFit:
    """The first fit pair, machine-major: what every broker below does until it misbehaves."""

    def __init__(self, after: int = 0) -> None:
        self.after = after  # decisions made before it misbehaves
        self.calls = 0

    def decide(self, view):
        self.calls += 1
        if self.calls > self.after:
            return self.misbehave(view)
        machines, tasks = view.fit_pairs
        return Decision(int(machines[0]), int(tasks[0])) if len(tasks) else None

    def misbehave(self, view):
        machines, tasks = view.fit_pairs
        return Decision(int(machines[0]), int(tasks[0])) if len(tasks) else None


class Raises(FirstFit):
    def misbehave(self, view):
        raise ValueError(f"boom after {self.after}")


class ExitsInDecide(FirstFit):
    def misbehave(self, view):
        sys.exit(0)


class KillsItsProcess(FirstFit):
    """Ends its process without a word (``os._exit``): in a worker, the worker dies."""

    def misbehave(self, view):
        os._exit(7)


class Sleeps(FirstFit):
    def misbehave(self, view):
        time.sleep(3600)


class Garbage(FirstFit):
    def misbehave(self, view):
        return "start everything"


class WritesIntoTheView(FirstFit):
    def misbehave(self, view):
        view.free[0, 0] = 1e9
        return None


class RefusesEveryCluster(FirstFit):
    def check_cluster(self, cluster):
        raise ValueError("I refuse every cluster")


class FailsInCheckCluster(FirstFit):
    def check_cluster(self, cluster):
        return len(cluster)  # a TypeError: a ClusterSpec has no len()


class ExitsInCheckCluster(FirstFit):
    def check_cluster(self, cluster):
        sys.exit(3)


class FailsToStart(FirstFit):
    def __init__(self, after: int = 0) -> None:
        raise TypeError("a constructor that fails")


class ExitsInConstructor(FirstFit):
    def __init__(self, after: int = 0) -> None:
        sys.exit(0)


class Labelled(FirstFit):
    """Takes a text option and a seed, to see options reach it as given."""

    def __init__(self, label: str = "", seed: int = 0) -> None:
        super().__init__()
        self.label = label
        self.seed = seed
        if "," not in label and label.startswith("must-have-comma"):
            raise ValueError(f"label {label!r} lost its comma")
