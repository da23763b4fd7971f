"""Every broker this installation knows, one row each: `cloudsim brokers`.

Three registries hold the built-in ones, and they are not interchangeable: the core's brokers (what
``replay``, ``compare``, ``bench`` and ``leaderboard`` run), the policies of DeepRM's own environment
(``compare deeprm --env deeprm``: DeepRM's code's heuristics, another implementation of ``sjf`` or
``packer`` than the core's) and the dispatchers of RLSK's federation (``compare rlsk --env rlsk``). A
row says which, what the broker is (the first sentence of its docstring), where it comes from, what it
needs and where it refuses to run. Brokers that installed packages declare (`agents.plugins`) are core
brokers and are listed with their package and version.
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import asdict, dataclass

from agents import (BROKERS, DEEPRM_ENV_BROKERS, GPU_POLICIES, GPU_VARIANTS, LEARNED, RLSK_DISPATCHERS, TRAINED_BY,
                    builtin_source, plugins)

__all__ = ["BrokerEntry", "catalogue"]

# Learned brokers whose observations hold no devices: they refuse a GPU cluster (their check_cluster).
_NO_DEVICES = ("deeprm", "deeprm-plus", "deepk8s", "deepk8s-a2c", "deepk8s-dagger")


@dataclass(frozen=True)
class BrokerEntry:
    """One broker of `catalogue`: its name, registry, first docstring sentence, origin, needs and refusals."""

    name: str
    registry: str
    summary: str
    source: str
    needs: str
    refuses: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _summary(factory) -> str:
    """The first sentence of a broker's docstring: its class's or its factory's (a partial's function's)."""
    while isinstance(factory, functools.partial):
        factory = factory.func
    flat = " ".join((inspect.getdoc(factory) or "").split("\n\n")[0].split())
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", flat)[0] if flat else "(no docstring)"


def _core(name: str, factory) -> BrokerEntry:
    needs, refuses = [], []
    if name in LEARNED:
        needs.append(f"a checkpoint (one ships; --checkpoint {name}=PATH from cloudsim train {TRAINED_BY[name]})")
    if name in GPU_POLICIES or name in GPU_VARIANTS:
        needs.append("a cluster with GPUs (openb node lists, the gpu-fill and gpu-replay workloads)")
    if name in _NO_DEVICES:
        refuses.append("clusters with GPUs (its observations hold no devices)")
    if name == "rlsk":
        needs.append("the clusters it was trained for (the machines split into its federation)")
    return BrokerEntry(name, "core", _summary(factory), plugins.source(name, builtin_source)["package"],
                       "; ".join(needs) or "-", "; ".join(refuses) or "-")


def catalogue() -> list[BrokerEntry]:
    """Every broker known here: the core's built-ins, the installed ones, DeepRM's environment's, RLSK's."""
    rows = [_core(name, factory) for name, factory in BROKERS.items()]
    for name, point in plugins.installed().items():
        dist = getattr(point, "dist", None)
        package = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
        clash = builtin_source(name)
        refused = (f"{clash} has this name too" if clash else
                   "it holds ':', which reads as a reference (module:Class)" if plugins.is_reference(name)
                   else None)
        summary = (f"(not loaded, its name is refused: {refused}; run it as --brokers {point.value})" if refused
                   else _installed_summary(name))
        rows.append(BrokerEntry(name, "core (installed)", summary, f"{package} ({point.value})", "-", "-"))
    rows += [BrokerEntry(name, "DeepRM's environment", _summary(factory),
                         plugins.source(name, builtin_source)["package"],
                         "compare deeprm --env deeprm", "any other command (not a broker of the core)")
             for name, factory in DEEPRM_ENV_BROKERS.items()]
    rows += [BrokerEntry(name, "RLSK's federation", _summary(RLSK_DISPATCHERS[name]),
                         plugins.source(name, builtin_source)["package"],
                         "compare rlsk --env rlsk", "any other command (a dispatcher over clusters, not machines)")
             for name in RLSK_DISPATCHERS]
    return rows


def _installed_summary(name: str) -> str:
    try:
        return _summary(plugins.factory(name, lambda _: None))
    except plugins.BrokerReferenceError as error:
        return f"does not load: {error}"
