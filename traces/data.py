"""Where the real workload samples are read from: one place for the rule every loader and benchmark follows."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_folder"]


def data_folder() -> Path:
    """``$CLOUDSIM_DATA`` when set, else ``shared/data`` beside this checkout (the layout of the project's
    machines: ``../shared/data`` seen from the repository)."""
    return Path(os.environ.get("CLOUDSIM_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
