"""The bundled sample series (``lmdk-gui --sample NAME``, the empty window's *Try a sample*)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent


def samples_folder(package: Path = _PACKAGE, prefix: str = sys.prefix) -> Path:
    """The bundled samples: resources/samples of the checkout (or an editable install) beside the package,
    else where an installed wheel put them (``share/lmdk_gui/samples`` under the environment's prefix,
    pyproject's data-files)."""
    checkout = package.parent / "resources" / "samples"
    installed = Path(prefix) / "share" / "lmdk_gui" / "samples"
    return checkout if checkout.is_dir() or not installed.is_dir() else installed


#: the folder of the bundled samples
SAMPLES = samples_folder()

#: ``--sample`` name → (file in resources/samples, the loader options it needs: column keywords only)
SAMPLE_FILES: dict[str, tuple[str, dict[str, Any]]] = {
    "energy": ("energy_hue_2013_jan.csv", {}),
    "gps": ("gps_bus_limerick.csv", {}),
    "contacts": ("contacts_person1672.csv", {"kind": "categorical", "duplicates": "first"}),
}
