"""Names a package of `agents` exports from modules it imports only when a name is first asked for.

A paper's package (`agents.deeprm`, `agents.deepjs`, `agents.deepk8s`, `agents.rlsk`) exports its network,
trainer and policy loader, whose modules import torch, which takes seconds; the command line and the brokers'
registry import the package's torch-free config only. `lazy_exports` gives such a package a module
``__getattr__`` (PEP 562) that imports a name's module on first use, so ``from agents.deeprm import train``
works and ``import agents.deeprm.config`` costs no torch.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], list[str]]:
    """The module ``__getattr__`` of ``package`` and its ``__all__``: ``exports`` maps each submodule (its name
    within the package) to the names it gives; a name is imported from its submodule when first asked for, then
    kept in the package as an ordinary attribute."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__, sorted(where)
