"""Every broker this installation knows, one row each: `cloudsim brokers`, read from the registry.

The registry (`agents.registry`) declares each built-in broker in one of three places, which are not
interchangeable: the core's brokers (what ``replay``, ``compare``, ``bench`` and ``leaderboard`` run), the
policies of DeepRM's own environment (``compare deeprm --env deeprm``: DeepRM's code's heuristics, another
implementation of ``sjf`` or ``packer`` than the core's) and the dispatchers of RLSK's federation
(``compare rlsk --env rlsk``). A row says which, what the broker is (the first sentence of its docstring),
where it comes from, what it needs and where it refuses to run. Brokers that installed packages declare
(`agents.plugins`) are core brokers and are listed with their package and version.
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import asdict, dataclass

from agents import builtin_source, plugins
from agents.registry import CORE, DEEPRM_ENV, RLSK_FEDERATION, BrokerSpec, broker_names, broker_spec

__all__ = ["BrokerEntry", "catalogue"]

_ELSEWHERE = {
    DEEPRM_ENV: ("DeepRM's environment", "compare deeprm --env deeprm", "any other command (not a broker of the core)"),
    RLSK_FEDERATION: ("RLSK's federation", "compare rlsk --env rlsk",
                      "any other command (a dispatcher over clusters, not machines)"),
}
"""The places other than the core: how a row names each, what its brokers need and where they refuse to run."""


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


def _core(spec: BrokerSpec) -> BrokerEntry:
    needs, refuses = [], []
    if spec.learned:
        needs.append(f"a checkpoint (one ships; --checkpoint {spec.name}=PATH from cloudsim train {spec.trained_by})")
    if spec.devices == "required":
        needs.append("a cluster with GPUs (openb node lists, the gpu-fill and gpu-replay workloads)")
    if spec.devices == "refused":
        refuses.append("clusters with GPUs (its observations hold no devices)")
    if spec.needs:
        needs.append(spec.needs)
    return BrokerEntry(spec.name, "core", _summary(spec.factory), plugins.source(spec.name, builtin_source)["package"],
                       "; ".join(needs) or "-", "; ".join(refuses) or "-")


def catalogue() -> list[BrokerEntry]:
    """Every broker known here: the core's built-ins, the installed ones, DeepRM's environment's, RLSK's."""
    rows = [_core(broker_spec(name)) for name in broker_names(CORE)]
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
    for place, (label, needs, refuses) in _ELSEWHERE.items():
        rows += [BrokerEntry(name, label, _summary(broker_spec(name, place).factory),
                             plugins.source(name, builtin_source)["package"], needs, refuses)
                 for name in broker_names(place)]
    return rows


def _installed_summary(name: str) -> str:
    try:
        return _summary(plugins.factory(name, lambda _: None))
    except plugins.BrokerReferenceError as error:
        return f"does not load: {error}"
