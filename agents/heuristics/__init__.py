"""The hand-written brokers: the classic schedulers the five papers compare against (`agents.heuristics.classic`)
and the placement policies of GPU-sharing clusters (`agents.heuristics.gpu`)."""

from agents.heuristics.classic import *  # noqa: F401,F403 (the names of its __all__)
from agents.heuristics.classic import __all__ as _classic
from agents.heuristics.gpu import *  # noqa: F401,F403
from agents.heuristics.gpu import __all__ as _gpu

__all__ = [*_classic, *_gpu]
