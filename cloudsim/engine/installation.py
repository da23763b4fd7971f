"""cloudsim's own top-level packages, and a check that Python imports them and not a user's namesakes.

The design card keeps ``agents`` and ``traces`` as top-level packages beside ``cloudsim``. A user's own
``agents.py`` or ``traces/__init__.py`` first on Python's path (the current folder under ``python -m``,
``PYTHONPATH``) would be imported in their place and every command would end in a confusing
``ModuleNotFoundError``; `shadowing_problem` finds that before anything is imported, without running
the other module.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

__all__ = ["PACKAGES", "ROOT", "shadowing_problem"]

ROOT = Path(__file__).resolve().parents[2]
"""The folder that holds cloudsim's packages (a checkout, or site-packages)."""
PACKAGES = ("cloudsim", "agents", "traces")


def shadowing_problem() -> str | None:
    """Why cloudsim cannot run here (None when it can): a module of another's that Python takes for one of
    cloudsim's `PACKAGES`, named with where it is and what to do."""
    for name in PACKAGES[1:]:
        expected = ROOT / name / "__init__.py"
        module = sys.modules.get(name)
        try:
            found = getattr(module, "__file__", None) if module is not None else \
                getattr(importlib.util.find_spec(name), "origin", None)
        except (ImportError, ValueError):
            found = None
        if found is not None and Path(found).is_file() and Path(found).resolve() == expected:
            continue
        if found is None and not expected.is_file():
            return f"cloudsim's package {name!r} is missing from {ROOT}; reinstall cloudsim (pip install -e .)"
        return (f"Python finds another module named {name!r} before cloudsim's own: {found or 'a folder of that name'} "
                "(first on the module path: the current folder, or PYTHONPATH); rename yours, or run cloudsim from "
                f"another folder or without that PYTHONPATH entry (cloudsim's is {expected.parent})")
    return None
