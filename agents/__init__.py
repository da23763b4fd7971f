"""Brokers (scheduling policies) for cloudsim: the one table that declares each built-in broker by name
(`agents.registry.register_broker`), and the functions that build a broker by name.

A new broker is its code plus one `register_broker` line below; every command, ``cloudsim brokers`` and the
default lists find it from there.
"""

from __future__ import annotations

from typing import Callable

from agents.rlsk import federation
from agents.deepk8s.config import BROKER_NAMES as DEEPK8S_BROKERS
from agents.rlsk.federation import FederatedBroker, make_dispatcher
from agents.heuristics.carbon import CarbonShift
from agents.heuristics.gpu import (ExactFragmentationGradientDescent, FragmentationGradientDescent, GpuBestFit,
                                   GpuClustering, GpuDotProduct, GpuPacking, GpuRandom)
from agents.heuristics import (
    BestFit,
    DominantResourceFairness,
    EasyBackfilling,
    FirstComeFirstServed,
    FirstFit,
    HighestResponseRatioNext,
    LeastLoad,
    Packer,
    PairScore,
    RandomFit,
    RoundRobin,
    ShortestJobFirst,
    Tetris,
    TetrisStar,
    Windowed,
)
from agents.deepjs.config import DEEPJS_TRAINING
from agents.deepk8s.config import DEEPK8S_TRAINING
from agents.deeprm.config import DEEPRM_PLUS_TRAINING, DEEPRM_TRAINING
from agents.registry import (CORE, DEEPRM_ENV, RLSK_FEDERATION, BrokerOptionError, broker_names, broker_source,
                             broker_spec, build, factories, make, register_broker, register_training)
from agents.rlsk.config import RLSK_TRAINING
from cloudsim._moved import install_moved_modules
from cloudsim.engine.foreign import failed

MOVED = {"agents.deeprm_config": "agents.deeprm.config", "agents.deeprm_broker": "agents.deeprm.broker",
         "agents.deeprm_numpy": "agents.deeprm.numpy_forward", "agents.deeprm_plus": "agents.deeprm.plus",
         "agents.deepjs_config": "agents.deepjs.config", "agents.deepk8s_config": "agents.deepk8s.config",
         "agents.rollout": "agents.deepk8s.rollout", "agents.rlsk_config": "agents.rlsk.config",
         "agents.federation": "agents.rlsk.federation", "agents.gpu": "agents.heuristics.gpu",
         "agents.checks": "agents.kit.checks", "agents.settings": "agents.kit.settings"}
"""The agents' modules of cloudsim 0.1.0 that moved into a package per paper (and the kit), by old path: they
import from there for one more release, with a `DeprecationWarning` (`cloudsim._moved`)."""
install_moved_modules(MOVED)

__all__ = [
    "BROKERS",
    "BestFit",
    "DominantResourceFairness",
    "FirstComeFirstServed",
    "FirstFit",
    "GPU_POLICIES",
    "GPU_VARIANTS",
    "HighestResponseRatioNext",
    "LEARNED",
    "TRAINED_BY",
    "LeastLoad",
    "Packer",
    "PairScore",
    "RandomFit",
    "RoundRobin",
    "ShortestJobFirst",
    "Tetris",
    "TetrisStar",
    "Windowed",
    "DEEPRM_ENV_BROKERS",
    "FederatedBroker",
    "RLSK_DISPATCHERS",
    "make_dispatcher",
    "make_federated_broker",
    "DEEPRM_TETRIS_STAR_KNOB",
    "builtin_source",
    "make_broker",
    "make_deeprm_broker",
]


# ------------------------------------------------ factories of the trained brokers (torch only when made)
def _deepjs(checkpoint: str | None = None, sample: bool = False, seed: int | None = 0) -> object:
    """DeepJS with the weights of ``checkpoint`` (None: the checkpoint shipped with the package)."""
    from agents.deepjs import DeepJS, load_policy  # torch is imported only when DeepJS is asked for

    return DeepJS(load_policy(checkpoint), sample=sample, seed=seed)


def _deepk8s(algo: str) -> Callable[..., object]:
    def deepk8s(checkpoint: str | None = None) -> object:
        """A trained Deepk8s policy (None: the checkpoint shipped for its algorithm)."""
        from agents.deepk8s import Deepk8sBroker, load_policy  # torch only when asked for
        from agents.kit import CheckpointMismatchError

        policy = load_policy(checkpoint, algo)
        held = policy.config.algo
        if held != algo:  # a run is labelled by the broker it names: the checkpoint must be that broker's
            raise CheckpointMismatchError(
                f"{policy.path}: holds a Deepk8s {held} policy, not {algo}; give it to its broker: "
                f"--brokers {DEEPK8S_BROKERS[held]} --checkpoint {DEEPK8S_BROKERS[held]}={policy.path}",
                path=policy.path)
        return Deepk8sBroker(policy)

    return deepk8s


def _rlsk(checkpoint: str | None = None, seed: int | None = 0) -> object:
    """The trained RLSK agent dispatching jobs to its clusters (None: the checkpoint shipped with the package),
    as a broker of the core: the machines split into the clusters it was trained for."""
    from agents.rlsk import load_policy  # torch only when asked for

    policy = load_policy(checkpoint)
    return FederatedBroker(policy, policy.config.clusters, seed=seed, name="rlsk")


def _deeprm_core(agent: str) -> Callable[..., object]:
    def deeprm(checkpoint: str | None = None, seed: int | None = 0) -> object:
        """A trained DeepRM or DeepRM_Plus policy as a broker of the core (None: the shipped checkpoint)."""
        from agents.deeprm import shipped_checkpoint  # torch only when asked for
        from agents.deeprm.broker import DeepRMBroker, load_numpy_policy

        path = checkpoint if checkpoint is not None else shipped_checkpoint(agent=agent)
        return DeepRMBroker(load_numpy_policy(str(path)), name=agent, seed=seed)

    return deeprm


# ------------------------------------------------ policies of DeepRM's environment
DEEPRM_TETRIS_STAR_KNOB = 0.5
"""Tetris*'s knob in DeepRM's environment unless one is given (the paper gives none)."""


def _deeprm_tetris_star(knob: float = DEEPRM_TETRIS_STAR_KNOB) -> Callable:
    from cloudsim.engine.envs.deeprm import tetris_star_actions

    if not 0.0 <= knob <= 1.0:
        raise ValueError(f"Tetris* knob must be in [0, 1] (1 = Packer, 0 = SJF), got {knob!r}")
    return lambda batch: tetris_star_actions(batch, knob)


def _deeprm_random(seed: int | None = 0) -> Callable:
    import numpy as np

    from cloudsim.engine.envs.deeprm import random_actions

    rng = np.random.default_rng(seed)
    return lambda batch: random_actions(batch, rng)


def _deeprm_named(name: str) -> Callable:
    def factory() -> Callable:
        from cloudsim.engine.envs.deeprm import DEEPRM_HEURISTICS

        return DEEPRM_HEURISTICS[name]

    return factory


def _deeprm(checkpoint: str | None = None, seed: int | None = 0) -> Callable:
    """A trained DeepRM policy (None: the checkpoint shipped with the package), its actions drawn with ``seed``."""
    from agents.deeprm import load_policy, shipped_checkpoint  # torch only when asked for

    return load_policy(checkpoint if checkpoint is not None else shipped_checkpoint(), seed=seed)


def _deeprm_plus(checkpoint: str | None = None, seed: int | None = 0) -> Callable:
    """A trained DeepRM_Plus policy (None: the checkpoint shipped with the package), its actions drawn with ``seed``."""
    from agents.deeprm import load_policy, shipped_checkpoint

    return load_policy(checkpoint if checkpoint is not None else shipped_checkpoint(agent="deeprm-plus"), seed=seed)


# ------------------------------------------------ the registry: every built-in broker, once
for _cls in (FirstFit, BestFit, Tetris, RandomFit, FirstComeFirstServed, ShortestJobFirst, HighestResponseRatioNext,
             DominantResourceFairness, Packer, TetrisStar, LeastLoad, RoundRobin, EasyBackfilling):
    register_broker(_cls.name, _cls)
for _cls in (FragmentationGradientDescent, GpuBestFit, GpuDotProduct, GpuPacking, GpuClustering, GpuRandom):
    register_broker(_cls.name, _cls, devices="required")
register_broker(CarbonShift.name, CarbonShift, listed=False, grid=True,
                needs="a grid signal (--carbon FILE --start DATETIME)")
register_broker(ExactFragmentationGradientDescent.name, ExactFragmentationGradientDescent, devices="required",
                listed=False)  # an ablation variant
register_broker("deepjs", _deepjs, trained_by="deepjs")
for _algo, _name in DEEPK8S_BROKERS.items():
    register_broker(_name, _deepk8s(_algo), trained_by="deepk8s", devices="refused")
register_broker("rlsk", _rlsk, trained_by="rlsk",
                needs="the clusters it was trained for (the machines split into its federation)")
register_broker("deeprm", _deeprm_core("deeprm"), trained_by="deeprm", devices="refused")
register_broker("deeprm-plus", _deeprm_core("deeprm-plus"), trained_by="deeprm-plus", devices="refused")

for _name in ("sjf", "packer", "fcfs", "hrrn"):
    register_broker(_name, _deeprm_named(_name), acts_in=DEEPRM_ENV)
register_broker("tetris-star", _deeprm_tetris_star, acts_in=DEEPRM_ENV)
register_broker("random", _deeprm_random, acts_in=DEEPRM_ENV)
register_broker("deeprm", _deeprm, acts_in=DEEPRM_ENV, trained_by="deeprm")
register_broker("deeprm-plus", _deeprm_plus, acts_in=DEEPRM_ENV, trained_by="deeprm-plus")

register_broker("first-fit", federation.first_fit, acts_in=RLSK_FEDERATION)
register_broker("random", federation.random_cluster, acts_in=RLSK_FEDERATION)
register_broker("round-robin", federation.round_robin, acts_in=RLSK_FEDERATION)
register_broker("least-load", federation.least_load, acts_in=RLSK_FEDERATION)
register_broker("lookahead", federation.lookahead, acts_in=RLSK_FEDERATION)
register_broker("rlsk", federation.rlsk_dispatcher, acts_in=RLSK_FEDERATION, trained_by="rlsk")

# ------------------------------------------------ the trainings of the learned brokers, as `cloudsim train` lists them
for _training in (DEEPJS_TRAINING, DEEPK8S_TRAINING, DEEPRM_TRAINING, DEEPRM_PLUS_TRAINING, RLSK_TRAINING):
    register_training(_training)

# Views of the registry, by the names earlier releases gave them.
BROKERS: dict[str, Callable[..., object]] = factories(CORE)
"""Broker factories by command-line name (the core's), in the order they are declared."""
GPU_POLICIES = {name: BROKERS[name] for name in broker_names(devices="required", listed=True)}
"""The GPU-sharing placement policies of the paper by command-line name."""
GPU_VARIANTS = {name: BROKERS[name] for name in broker_names(devices="required", listed=False)}
"""Variants of the GPU policies for ablations, brokers by name too, in no default list."""
LEARNED = tuple(sorted(broker_names(learned=True)))
"""The brokers that are trained policies: each takes ``checkpoint=PATH`` and ships a checkpoint of its own."""
TRAINED_BY = {name: spec.trained_by for name in LEARNED if (spec := broker_spec(name)) is not None}
"""Each learned broker, and the `cloudsim train` command that makes its checkpoints."""
DEEPRM_ENV_BROKERS: dict[str, Callable[..., Callable]] = factories(DEEPRM_ENV)
"""Policies of DeepRM's environment (`cloudsim.engine.envs.deeprm`) by name: ``policy(batch) -> actions``.
The heuristics act as DeepRM's code defines them (over the M visible slots)."""
RLSK_DISPATCHERS = factories(RLSK_FEDERATION)
"""Cluster-level policies of RLSK's federation by name (`cloudsim compare rlsk --env rlsk`)."""


def make_broker(name: str, *, seed: int | None = None, **options) -> object:
    """Build the broker ``name`` with ``options``: a built-in (e.g. ``"first-fit"``), one an installed
    package declares (`agents.plugins`), or a reference, ``package.module:Class`` or ``path/to/file.py:Class``.

    ``seed`` goes to brokers that draw random numbers and is ignored by the others; without one they
    use their own default seed (0), so two runs make the same decisions.
    """
    if broker_spec(name) is not None:
        return make(name, CORE, seed, options)
    from agents import plugins

    made = plugins.factory(name, builtin_source)
    try:
        broker = build({name: made}, name, "", seed, options)
    except (plugins.BrokerReferenceError, BrokerOptionError, KeyboardInterrupt):
        raise
    except BaseException as error:  # the user's own constructor failed, or exited
        raise plugins.BrokerReferenceError(f"broker {name!r}: making it {failed(error, made)}") from error
    if not callable(getattr(broker, "decide", None)):
        raise plugins.BrokerReferenceError(f"broker {name!r} made {broker!r}, which has no decide(view) method")
    return broker


builtin_source = broker_source
"""What a name means among the built-in brokers (`agents.registry.broker_source`)."""


def make_federated_broker(name: str, *, clusters: int = 3, seed: int | None = None, **options) -> FederatedBroker:
    """The cluster-level policy ``name`` of RLSK's federation (`RLSK_DISPATCHERS`) as a broker of the core,
    on ``clusters`` clusters; ``seed`` seeds its random draws and the postponements."""
    return FederatedBroker(make_dispatcher(name, seed=seed, **options), clusters, seed=seed, name=name)


def make_deeprm_broker(name: str, *, seed: int | None = None, **options) -> Callable:
    """Build the policy of DeepRM's environment declared as ``name``."""
    return make(name, DEEPRM_ENV, seed, options)
