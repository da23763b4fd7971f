"""Entry points of the registered Gymnasium environments: each paper's environment with its default workload.

The environments live in the engine (`cloudsim.engine.envs`), which may not import the
trace loaders; the composition layer may, so the defaults are filled in here.
"""

from __future__ import annotations

from typing import Callable, Sequence

from cloudsim.engine.envs import Deepk8sEnv, RLSKEnv
from cloudsim.engine.specs import JobSpec

__all__ = ["make_deepk8s", "make_rlsk"]


def make_deepk8s(workload: Callable[[int], Sequence[JobSpec]] | None = None, **options) -> Deepk8sEnv:
    """`Deepk8sEnv` on ``workload`` (default: `traces.deepk8s_workload`, Alibaba task sequences by seed)."""
    if workload is None:
        from traces import deepk8s_workload  # the trace loaders only when the default is asked for

        workload = deepk8s_workload
    return Deepk8sEnv(workload, **options)


def make_rlsk(workload: Callable[[int], Sequence[JobSpec]] | None = None, load: float = 0.7,
              jobs: int | None = None, **options) -> RLSKEnv:
    """`RLSKEnv` on ``workload`` (default: `traces.rlsk_workload` at ``load``, by seed, with ``jobs`` jobs
    (default: the generator's) over the environment's clusters)."""
    if workload is None:
        from traces import rlsk_workload

        count = {} if jobs is None else {"jobs": jobs}
        clusters = options.get("clusters", 3)

        def workload(seed: int) -> list[JobSpec]:
            return rlsk_workload(load, seed=seed, clusters=clusters, **count)

    return RLSKEnv(workload, **options)
