"""The engine's modules under their paths of cloudsim 0.1.0 (``cloudsim.specs``, ``cloudsim.broker``, ...), for
one more release: importing one gives the module of `cloudsim.engine` itself (the same objects, so that
``isinstance`` checks and pickles made with the old paths keep working), with a `DeprecationWarning` that
names the new path."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

__all__ = ["MOVED", "install_moved_modules"]

MOVED = ("arithmetic", "broker", "cluster", "compiled", "devices", "envs", "faults", "foreign", "fragmentation",
         "installation", "kernels", "metrics", "plan_check", "record", "reservations", "runner", "simulation",
         "specs", "streaming", "tasks")
"""The engine's modules that were ``cloudsim.<name>`` in cloudsim 0.1.0 and are ``cloudsim.engine.<name>`` now."""


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``cloudsim.<name>`` (and its submodules) for a name of `MOVED`, and loads it as the engine's module."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec] = {}

    def find_spec(self, fullname: str, path=None, target=None):
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != "cloudsim" or parts[1] not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        new = "cloudsim.engine." + spec.name.removeprefix("cloudsim.")
        warnings.warn(f"{spec.name} moved to {new}: import it from there (or its public names from cloudsim); "
                      "the old path goes in the next release", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module) -> None:
        # The engine's module ran when it was imported; the import system has set its __spec__ to the old
        # path's: give it its own back.
        module.__spec__ = self._specs.pop(module.__spec__.name)


def install_moved_modules() -> None:
    """Let the old paths import (once; importing cloudsim does it)."""
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedModules())  # before the path finder, which would load a second copy of a
        # moved package's submodule (cloudsim.envs.deeprm) from the package's folder
