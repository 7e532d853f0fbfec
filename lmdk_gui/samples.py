"""The bundled sample series (``lmdk-gui --sample NAME``, the empty window's *Try a sample*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: the folder of the bundled samples (resources/samples of the checkout or installed tree)
SAMPLES = Path(__file__).resolve().parent.parent / "resources" / "samples"

#: ``--sample`` name → (file in resources/samples, the loader options it needs: column keywords only)
SAMPLE_FILES: dict[str, tuple[str, dict[str, Any]]] = {
    "energy": ("energy_hue_2013_jan.csv", {}),
    "gps": ("gps_bus_limerick.csv", {}),
    "contacts": ("contacts_person1672.csv", {"kind": "categorical", "duplicates": "first"}),
}
