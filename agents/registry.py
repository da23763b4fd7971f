"""The one registry of named brokers and of the trainings that make the learned ones, and the one rule that
builds a broker by name.

Every broker cloudsim ships is declared once, in `agents` (``agents/__init__.py``), by `register_broker`:
its name, the factory that makes it (a class, or a function that imports its code only when called), where it
acts, and what a command must know of it without making it (whether it is a trained policy and which
``cloudsim train`` command makes its checkpoints, what it needs of a cluster, whether the default lists hold
it). Everything else reads this registry: the command line's choices, ``cloudsim brokers``, the default broker
lists of compare and leaderboard, the checks of options. Brokers of installed packages (`agents.plugins`) are
found by `broker_source` too, and built by `agents.make_broker` like the built-in ones.

Each ``cloudsim train NAME`` is declared once too, by `register_training` (`TrainingSpec`): the agent's config
dataclass (whose settings are the command's options), the function that trains it, the command's texts and what
the run layer must know to check, resume and report it. The run layer builds the command's config, its
subcommand and its place in ``cloudsim train`` from the spec alone; a new learned agent is its package under
`agents` plus its `register_broker` and `register_training` lines.

A broker acts in one of three places, which are not interchangeable: the core's simulation (`CORE`: what
``replay``, ``compare``, ``bench`` and ``leaderboard`` run), DeepRM's own environment (`DEEPRM_ENV`: DeepRM's
code's heuristics, another implementation of ``sjf`` or ``packer`` than the core's) and RLSK's federation
(`RLSK_FEDERATION`: dispatchers over clusters, not machines). A name is unique within its place.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["CORE", "DEEPRM_ENV", "DEVICES", "PLACES", "RLSK_FEDERATION", "BrokerOptionError", "BrokerSpec",
           "TRAINS_ON", "TrainingSpec", "broker_names", "broker_source", "broker_spec", "build", "entry_point",
           "factories", "make", "register_broker", "register_training", "reserved_option_problem", "training_names",
           "training_spec"]

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
        grid: whether it plans by the grid's carbon intensity, so that a run of it needs a signal (``--carbon``).
    """

    name: str
    factory: Callable[..., Any]
    acts_in: str = CORE
    trained_by: str | None = None
    devices: str = "any"
    needs: str = ""
    listed: bool = True
    grid: bool = False

    @property
    def learned(self) -> bool:
        """Whether it is a trained policy (it loads a checkpoint)."""
        return self.trained_by is not None


_REGISTRY: dict[str, dict[str, BrokerSpec]] = {place: {} for place in PLACES}


def register_broker(name: str, factory: Callable[..., Any], *, acts_in: str = CORE, trained_by: str | None = None,
                    devices: str = "any", needs: str = "", listed: bool = True, grid: bool = False) -> BrokerSpec:
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
    spec = BrokerSpec(name, factory, acts_in, trained_by, devices, needs, listed, grid)
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


@dataclass(frozen=True)
class TrainingSpec:
    """One ``cloudsim train NAME``: the learned agent it trains, and what the command line and the run layer know
    of it without importing its code (torch).

    Attributes:
        name: the command's AGENT; the brokers it makes checkpoints for say ``trained_by=NAME``.
        title: the agent as the texts name it ("DeepRM_Plus"): the title of its options' group, the training a
            --resume message names.
        config: its config dataclass: the fields made with `agents.kit.settings.setting` are the command's
            options (less ``leave_out``), and what the training saves as config.json.
        train: ``"module:function"``, imported when a training starts: ``function(agent, out, *, resume,
            tensorboard, progress, save_every, device, threads, **options)`` (with ``workload=`` when ``workload``
            names one) trains the agent config ``agent`` into the folder ``out`` and returns the summary the
            command prints (``threads=None``: its own count, ``threads`` below).
        summary: its line in ``cloudsim train --help``.
        description: its ``cloudsim train NAME --help``.
        describe: ``describe(agent)``: what the command says it trains, from the agent config.
        writes: what ``--out DIR`` receives, for its help ("folder for policy.pt ...").
        threads: torch's CPU threads unless ``--threads`` says otherwise (`agents.kit.training_threads`): the
            count its committed trainings ran on.
        options: a frozen dataclass of the command's own options beside the agent's settings, its fields made with
            `setting`: how the training runs, not what it learns, so neither saved with the agent nor compared on
            --resume (DeepRM's ``keep_every``); passed to ``train`` by name. None: none.
        check: ``check(command)``, the command's own checks of how its options fit together, before anything
            is written: ``command`` has the settings and options as attributes, ``agent`` (the agent config it
            trains), ``given`` (the settings chosen on the command line) and ``kind`` (the algorithm it trains,
            ``kind`` below); a problem is an `agents.kit.settings.SettingProblem` naming the field. None: none.
        defaults: the agent config a new training starts from, where not the config's own defaults (DeepRM_Plus's).
        leave_out: settings of the config that are not this command's options (DeepRM's cloning of SJF).
        marks: saved settings that tell a folder of this training from another's of the same config (DeepRM_Plus:
            ``{"network": "cnn"}``).
        length: the setting that says how long it trains, which a --resume may raise.
        unit: what ``--save-every`` counts ("iterations", "epochs").
        save_every: ``--save-every``'s default.
        progress_key: its policy.pt's entry of how much of ``length`` is done.
        checkpoint_agent: the agent its checkpoints name, where another's (DeepRM_Plus's are DeepRM's); None: ``name``.
        state_file: the file in ``out`` a resume starts from; ``state_files`` by ``kind`` where it differs.
        kind: the setting that names the algorithm, where the agent trains by several (Deepk8s's ``algo``).
        reads: settings that name a file the training reads (kept out of --out).
        workload: the `traces` function that draws its training workloads (passed to ``train`` as ``workload=``),
            for an agent whose environment does not draw its own; None.
        load_of: the workload generator whose range of loads its ``load`` and ``jobs`` settings must fit; None.
        trains_on: ``"environment"``: episodes its own environment draws (the command's options are the run's and
            the agent's); ``"chunks"``: sliding chunks of a workload the command is given, so the command also takes
            the workload, cluster and runner options, and ``train`` gets ``chunks`` ((label, jobs) pairs),
            ``cluster``, ``runner``, ``record`` (the workload's account for config.json), ``init``, ``given`` and
            ``on_chunk`` (DeepJS's Algorithm 2).
    """

    name: str
    title: str
    config: type
    train: str
    summary: str
    description: str
    describe: Callable[[Any], str]
    writes: str
    threads: int
    options: type | None = None
    check: Callable[[Any], None] | None = None
    defaults: Any = None
    leave_out: tuple[str, ...] = ()
    marks: Mapping[str, Any] = field(default_factory=dict)
    length: str = "iterations"
    unit: str = "iterations"
    save_every: int = 10
    progress_key: str = "iterations"
    checkpoint_agent: str | None = None
    state_file: str = "policy.pt"
    state_files: Mapping[str, str] = field(default_factory=dict)
    kind: str | None = None
    reads: tuple[str, ...] = ()
    workload: str | None = None
    load_of: str | None = None
    trains_on: str = "environment"

    def state_file_of(self, kind: str | None) -> str:
        """The file a resume of a training of algorithm ``kind`` starts from."""
        return self.state_files.get(kind, self.state_file) if kind is not None else self.state_file


_TRAININGS: dict[str, TrainingSpec] = {}
TRAINS_ON = ("environment", "chunks")
"""What a training runs on (`TrainingSpec.trains_on`)."""


def register_training(spec: TrainingSpec) -> TrainingSpec:
    """Declare the training ``spec.name`` (see `TrainingSpec`); returns it. A name declared already, a ``train``
    that is no ``module:function`` and a thread count below 1 are refused."""
    if spec.name in _TRAININGS:
        raise ValueError(f"training {spec.name!r} is already declared; choose another name")
    module, _, function = spec.train.partition(":")
    if not module or not function:
        raise ValueError(f"training {spec.name!r}: train must be 'module:function', got {spec.train!r}")
    if spec.trains_on not in TRAINS_ON:
        raise ValueError(f"training {spec.name!r}: trains_on must be one of {', '.join(TRAINS_ON)}, got "
                         f"{spec.trains_on!r}")
    if not (isinstance(spec.threads, int) and spec.threads >= 1):
        raise ValueError(f"training {spec.name!r}: threads must be a whole number >= 1, got {spec.threads!r}")
    _TRAININGS[spec.name] = spec
    return spec


def training_spec(name: str) -> TrainingSpec:
    """The training ``cloudsim train NAME`` runs; a KeyError naming the trainings for another name."""
    try:
        return _TRAININGS[name]
    except KeyError:
        raise KeyError(f"no training {name!r}; choose one of {', '.join(_TRAININGS)}") from None


def training_names() -> tuple[str, ...]:
    """Every declared training, in the order declared (``cloudsim train``'s subcommands)."""
    return tuple(_TRAININGS)


def entry_point(reference: str) -> Any:
    """What ``"module:name"`` names, its module imported now."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)
