"""Modules under their paths of cloudsim 0.1.0 (the engine's ``cloudsim.specs``, ``cloudsim.broker``, ...; the
agents' ``agents.deeprm_config``, ``agents.gpu``, ...), for one more release: importing one gives the module at its
new path (the same objects, so that ``isinstance`` checks and pickles made with the old paths keep working), with a
`DeprecationWarning` that names the new path."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from typing import Mapping

__all__ = ["MOVED", "install_moved_modules"]

MOVED = ("arithmetic", "broker", "cluster", "compiled", "devices", "envs", "faults", "foreign", "fragmentation",
         "installation", "kernels", "metrics", "plan_check", "record", "reservations", "runner", "simulation",
         "specs", "streaming", "tasks")
"""The engine's modules that were ``cloudsim.<name>`` in cloudsim 0.1.0 and are ``cloudsim.engine.<name>`` now."""


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a moved module by its old path (and its submodules), and loads it as the module at its new path."""

    def __init__(self) -> None:
        self.moves: dict[str, str] = {}
        self._specs: dict[str, importlib.machinery.ModuleSpec] = {}

    def new_path(self, fullname: str) -> str | None:
        """Where the module ``fullname`` is now; None when it did not move."""
        for old, new in self.moves.items():
            if fullname == old or fullname.startswith(old + "."):
                return new + fullname[len(old):]
        return None

    def find_spec(self, fullname: str, path=None, target=None):
        return None if self.new_path(fullname) is None else importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        new = self.new_path(spec.name)
        package = spec.name.split(".")[0]
        public = " (or its public names from cloudsim)" if package == "cloudsim" else ""
        warnings.warn(f"{spec.name} moved to {new}: import it from there{public}; the old path goes in the next "
                      "release", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module) -> None:
        # The module at the new path ran when it was imported; the import system has set its __spec__ to the old
        # path's: give it its own back.
        module.__spec__ = self._specs.pop(module.__spec__.name)


def install_moved_modules(moves: Mapping[str, str] | None = None) -> None:
    """Let the old paths import: ``moves`` maps each old module path to its new one (None: the engine's modules,
    `MOVED`). Importing cloudsim installs the engine's; `agents` installs its own."""
    finder = next((finder for finder in sys.meta_path if isinstance(finder, _MovedModules)), None)
    if finder is None:
        finder = _MovedModules()
        sys.meta_path.insert(0, finder)  # before the path finder, which would load a second copy of a moved
        # package's submodule (cloudsim.envs.deeprm) from the package's folder
    finder.moves.update(moves if moves is not None else {f"cloudsim.{name}": f"cloudsim.engine.{name}"
                                                         for name in MOVED})
