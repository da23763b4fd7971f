"""The one registry of named brokers, and the one rule that builds a broker by name.

Every broker cloudsim ships is declared once, in `agents` (``agents/__init__.py``), by `register_broker`:
its name, the factory that makes it (a class, or a function that imports its code only when called), where it
acts, and what a command must know of it without making it (whether it is a trained policy and which
``cloudsim train`` command makes its checkpoints, what it needs of a cluster, whether the default lists hold
it). Everything else reads this registry: the command line's choices, ``cloudsim brokers``, the default broker
lists of compare and leaderboard, the checks of options. Brokers of installed packages (`agents.plugins`) are
found by `broker_source` too, and built by `agents.make_broker` like the built-in ones.

A broker acts in one of three places, which are not interchangeable: the core's simulation (`CORE`: what
``replay``, ``compare``, ``bench`` and ``leaderboard`` run), DeepRM's own environment (`DEEPRM_ENV`: DeepRM's
code's heuristics, another implementation of ``sjf`` or ``packer`` than the core's) and RLSK's federation
(`RLSK_FEDERATION`: dispatchers over clusters, not machines). A name is unique within its place.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping

__all__ = ["CORE", "DEEPRM_ENV", "DEVICES", "PLACES", "RLSK_FEDERATION", "BrokerOptionError", "BrokerSpec",
           "broker_names", "broker_source", "broker_spec", "build", "factories", "make", "register_broker",
           "reserved_option_problem"]

CORE = "core"
DEEPRM_ENV = "deeprm-env"
RLSK_FEDERATION = "rlsk-federation"
PLACES = {CORE: "cloudsim's broker", DEEPRM_ENV: "cloudsim's policy of DeepRM's environment",
          RLSK_FEDERATION: "cloudsim's dispatcher of RLSK's federation"}
"""Where a broker acts, and how messages name a broker of that place."""
_FOR = {CORE: "", DEEPRM_ENV: " for DeepRM's environment", RLSK_FEDERATION: " for RLSK's federation"}
DEVICES = ("any", "required", "refused")
"""What a broker makes of devices (GPUs): it runs with or without them, it needs a cluster with them (the GPU
policies), or it refuses one (its observations hold no devices; its ``check_cluster`` says so)."""


@dataclass(frozen=True)
class BrokerSpec:
    """One named broker: where it acts, what makes it, and what it needs.

    Attributes:
        name: its name on the command line and in results.
        factory: ``factory(**options)`` makes it (``seed=`` too, when the factory takes one); a class, or a
            function that imports the broker's code only when called (torch is imported only then).
        acts_in: one of `PLACES`.
        trained_by: for a trained policy, the ``cloudsim train`` command that makes its checkpoints; it then
            takes ``checkpoint=PATH`` and ships a checkpoint of its own. None for a hand-written broker.
        devices: one of `DEVICES`.
        needs: what else it needs, in words, for ``cloudsim brokers`` ("" when nothing).
        listed: whether default broker lists hold it (compare's, leaderboard's); False for ablation variants.
    """

    name: str
    factory: Callable[..., Any]
    acts_in: str = CORE
    trained_by: str | None = None
    devices: str = "any"
    needs: str = ""
    listed: bool = True

    @property
    def learned(self) -> bool:
        """Whether it is a trained policy (it loads a checkpoint)."""
        return self.trained_by is not None


_REGISTRY: dict[str, dict[str, BrokerSpec]] = {place: {} for place in PLACES}


def register_broker(name: str, factory: Callable[..., Any], *, acts_in: str = CORE, trained_by: str | None = None,
                    devices: str = "any", needs: str = "", listed: bool = True) -> BrokerSpec:
    """Declare the broker ``name`` (see `BrokerSpec` for the fields); returns its spec. A name already
    declared in the same place, an unknown place or devices value, and a name that reads as a reference
    (``module:Class``) are refused."""
    if acts_in not in PLACES:
        raise ValueError(f"broker {name!r}: acts_in must be one of {', '.join(PLACES)}, got {acts_in!r}")
    if devices not in DEVICES:
        raise ValueError(f"broker {name!r}: devices must be one of {', '.join(DEVICES)}, got {devices!r}")
    if not name or ":" in name or name != name.strip():
        raise ValueError(f"broker name {name!r}: give a non-empty name without ':' (which marks a module:Class "
                         "reference) and without surrounding spaces")
    if name in _REGISTRY[acts_in]:
        raise ValueError(f"broker {name!r} is already declared as {PLACES[acts_in]}; choose another name")
    if not callable(factory):
        raise ValueError(f"broker {name!r}: its factory {factory!r} is not callable")
    spec = BrokerSpec(name, factory, acts_in, trained_by, devices, needs, listed)
    _REGISTRY[acts_in][name] = spec
    return spec


def broker_spec(name: str, acts_in: str = CORE) -> BrokerSpec | None:
    """The spec of the built-in broker ``name`` of place ``acts_in``; None when there is none."""
    return _REGISTRY[acts_in].get(name)


def broker_names(acts_in: str = CORE, *, learned: bool | None = None, devices: str | None = None,
                 listed: bool | None = None) -> tuple[str, ...]:
    """The built-in brokers of place ``acts_in`` in the order they were declared, those matching the
    filters given (None: either)."""
    return tuple(spec.name for spec in _REGISTRY[acts_in].values()
                 if (learned is None or spec.learned == learned) and (devices is None or spec.devices == devices)
                 and (listed is None or spec.listed == listed))


def factories(acts_in: str = CORE) -> dict[str, Callable[..., Any]]:
    """Name -> factory of every built-in broker of place ``acts_in`` (a new dict)."""
    return {name: spec.factory for name, spec in _REGISTRY[acts_in].items()}


def make(name: str, acts_in: str = CORE, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
    """Build the built-in broker ``name`` of place ``acts_in`` with ``options`` (see `build`)."""
    return build(factories(acts_in), name, _FOR[acts_in], seed, options or {})


def broker_source(name: str) -> str | None:
    """What a name means among the built-in brokers ("cloudsim's broker sjf", or every place that has it),
    or None when it is no built-in's name."""
    where = [label for place, label in PLACES.items() if name in _REGISTRY[place]]
    return f"{' and '.join(where)} {name}" if where else None


class BrokerOptionError(ValueError):
    """An option a broker's factory does not take."""


def build(registry: Mapping[str, Callable[..., Any]], name: str, where: str, seed: int | None,
          options: dict[str, Any]) -> Any:
    """``registry[name](**options)``; ``seed`` is passed to factories that take one (those that draw
    random numbers) and ignored by the others; None leaves the factory's own default seed, so that a
    policy built without one still runs reproducibly. An unknown name is a ValueError listing the names
    (``where`` says which registry, e.g. " for RLSK's federation"), an option the factory does not take a
    `BrokerOptionError` listing those it takes."""
    try:
        factory = registry[name]
    except KeyError:
        raise ValueError(f"unknown broker {name!r}{where}; choose one of {', '.join(registry)}") from None
    for key in options:
        problem = reserved_option_problem(key)
        if problem is not None:
            raise BrokerOptionError(f"broker {name!r}{where}: {problem}")
    signature = _signature(factory)
    parameters = _parameters(signature)
    if parameters is not None:
        unknown = [key for key in options if key not in parameters]
        if unknown:
            takes = ", ".join(p for p in parameters if p != "seed") or "none"
            raise BrokerOptionError(f"broker {name!r}{where} takes no option {', '.join(map(repr, unknown))}; "
                                    f"its options: {takes}")
    if seed is not None and signature is not None and "seed" in signature.parameters:
        options = {**options, "seed": seed}
    return factory(**options)


def reserved_option_problem(key: str) -> str | None:
    """Why ``key`` may not be one of a broker's options (None when it may): the run gives it."""
    if key == "seed":
        return ("its seed is the run's (--seed, or each episode's seed in compare and leaderboard), not an "
                "option; leave seed out of its options")
    return None


def _signature(factory: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):  # a callable without one (some builtins)
        return None


def _parameters(signature: inspect.Signature | None) -> list[str] | None:
    """The keyword options a factory of this signature takes; None when it takes any (``**kwargs``) or has none."""
    if signature is None:
        return None
    kinds = {parameter.kind for parameter in signature.parameters.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return None
    return [name for name, parameter in signature.parameters.items()
            if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
