"""The engine: SimPy processes over numpy state that know jobs, machines and brokers, and nothing else.

It imports neither the brokers (`agents`), nor the workloads (`traces`), nor the run layer (`cloudsim.run`) or
the command line (`cloudsim.cli`): import-linter holds that (`setup.cfg`). Its public names are importable
from `cloudsim` itself (``from cloudsim import ClusterSpec, simulate``); its modules from here
(``cloudsim.engine.specs``, ``cloudsim.engine.broker``, ...).
"""
