"""Brokers (scheduling policies) for cloudsim, and a registry that builds them by name."""

from __future__ import annotations

from typing import Callable

from agents.deepk8s_config import BROKER_NAMES as DEEPK8S_BROKERS
from agents.federation import DISPATCHERS as RLSK_DISPATCHERS
from agents.federation import FederatedBroker, make_dispatcher
from agents.gpu import GPU_POLICIES, GPU_VARIANTS
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
from agents.registry import BrokerOptionError, build
from cloudsim.foreign import failed

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


def _deepjs(checkpoint: str | None = None, sample: bool = False, seed: int | None = 0) -> object:
    """DeepJS with the weights of ``checkpoint`` (None: the checkpoint shipped with the package)."""
    from agents.deepjs import DeepJS, load_policy  # torch is imported only when DeepJS is asked for

    return DeepJS(load_policy(checkpoint), sample=sample, seed=seed)


BROKERS: dict[str, Callable[..., object]] = {
    cls.name: cls
    for cls in (
        FirstFit,
        BestFit,
        Tetris,
        RandomFit,
        FirstComeFirstServed,
        ShortestJobFirst,
        HighestResponseRatioNext,
        DominantResourceFairness,
        Packer,
        TetrisStar,
        LeastLoad,
        RoundRobin,
        EasyBackfilling,
    )
}
BROKERS.update(GPU_POLICIES)
BROKERS.update(GPU_VARIANTS)
BROKERS["deepjs"] = _deepjs


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


for _algo, _name in DEEPK8S_BROKERS.items():
    BROKERS[_name] = _deepk8s(_algo)


def _rlsk(checkpoint: str | None = None, seed: int | None = 0) -> object:
    """The trained RLSK agent dispatching jobs to its clusters (None: the checkpoint shipped with the package),
    as a broker of the core: the machines split into the clusters it was trained for."""
    from agents.rlsk import load_policy  # torch only when asked for

    policy = load_policy(checkpoint)
    return FederatedBroker(policy, policy.config.clusters, seed=seed, name="rlsk")


BROKERS["rlsk"] = _rlsk


def _deeprm_core(agent: str) -> Callable[..., object]:
    def deeprm(checkpoint: str | None = None, seed: int | None = 0) -> object:
        """A trained DeepRM or DeepRM_Plus policy as a broker of the core (None: the shipped checkpoint)."""
        from agents.deeprm import shipped_checkpoint  # torch only when asked for
        from agents.deeprm_broker import DeepRMBroker, load_numpy_policy

        path = checkpoint if checkpoint is not None else shipped_checkpoint(agent=agent)
        return DeepRMBroker(load_numpy_policy(str(path)), name=agent, seed=seed)

    return deeprm


BROKERS["deeprm"] = _deeprm_core("deeprm")
BROKERS["deeprm-plus"] = _deeprm_core("deeprm-plus")
"""Broker factories by command-line name; each class's ``name`` is its key."""

TRAINED_BY = {"deepjs": "deepjs", **{name: "deepk8s" for name in DEEPK8S_BROKERS.values()}, "deeprm": "deeprm",
              "deeprm-plus": "deeprm-plus", "rlsk": "rlsk"}
"""Each learned broker, and the `cloudsim train` command that makes its checkpoints."""
LEARNED = tuple(TRAINED_BY)
"""The brokers that are trained policies: each takes ``checkpoint=PATH`` and ships a checkpoint of its own."""


def make_broker(name: str, *, seed: int | None = None, **options) -> object:
    """Build the broker ``name`` with ``options``: a built-in (e.g. ``"first-fit"``), one an installed
    package declares (`agents.plugins`), or a reference, ``package.module:Class`` or ``path/to/file.py:Class``.

    ``seed`` goes to brokers that draw random numbers and is ignored by the others; without one they
    use their own default seed (0), so two runs make the same decisions.
    """
    if name in BROKERS:
        return build(BROKERS, name, "", seed, options)
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


def builtin_source(name: str) -> str | None:
    """What a name means among the built-in registries ("cloudsim's broker sjf"), or None when it is none of them."""
    where = [label for label, registry in (("cloudsim's broker", BROKERS),
                                           ("cloudsim's policy of DeepRM's environment", DEEPRM_ENV_BROKERS),
                                           ("cloudsim's dispatcher of RLSK's federation", RLSK_DISPATCHERS))
             if name in registry]
    return f"{' and '.join(where)} {name}" if where else None


def make_federated_broker(name: str, *, clusters: int = 3, seed: int | None = None, **options) -> FederatedBroker:
    """The cluster-level policy ``name`` of RLSK's federation (`RLSK_DISPATCHERS`) as a broker of the core,
    on ``clusters`` clusters; ``seed`` seeds its random draws and the postponements."""
    return FederatedBroker(make_dispatcher(name, seed=seed, **options), clusters, seed=seed, name=name)


# ------------------------------------------------ brokers of DeepRM's environment
DEEPRM_TETRIS_STAR_KNOB = 0.5
"""Tetris*'s knob in DeepRM's environment unless one is given (the paper gives none)."""


def _deeprm_tetris_star(knob: float = DEEPRM_TETRIS_STAR_KNOB) -> Callable:
    from cloudsim.envs.deeprm import tetris_star_actions

    if not 0.0 <= knob <= 1.0:
        raise ValueError(f"Tetris* knob must be in [0, 1] (1 = Packer, 0 = SJF), got {knob!r}")
    return lambda batch: tetris_star_actions(batch, knob)


def _deeprm_random(seed: int | None = 0) -> Callable:
    import numpy as np

    from cloudsim.envs.deeprm import random_actions

    rng = np.random.default_rng(seed)
    return lambda batch: random_actions(batch, rng)


def _deeprm_named(name: str) -> Callable:
    def factory() -> Callable:
        from cloudsim.envs.deeprm import DEEPRM_HEURISTICS

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


DEEPRM_ENV_BROKERS: dict[str, Callable[..., Callable]] = {
    "sjf": _deeprm_named("sjf"),
    "packer": _deeprm_named("packer"),
    "fcfs": _deeprm_named("fcfs"),
    "hrrn": _deeprm_named("hrrn"),
    "tetris-star": _deeprm_tetris_star,
    "random": _deeprm_random,
    "deeprm": _deeprm,
    "deeprm-plus": _deeprm_plus,
}
"""Policies of DeepRM's environment (`cloudsim.envs.deeprm`) by name: ``policy(batch) -> actions``.
The heuristics act as DeepRM's code defines them (over the M visible slots)."""


def make_deeprm_broker(name: str, *, seed: int | None = None, **options) -> Callable:
    """Build the policy of DeepRM's environment registered under ``name``."""
    return build(DEEPRM_ENV_BROKERS, name, " for DeepRM's environment", seed, options)
