"""Making a kept release again (``lmdk ledger reexport``): the same input, landmarks, settings and key give the
same release, bit for bit, and spend no new ε (the ledger entry is recorded with ``reexport_of``).

Its own module: it reads the ledger and writes through the export, which itself records into the ledger."""

from __future__ import annotations

import numpy as np

from .ledger import KEY_BINDING, LedgerError, find

__all__ = ["reexport"]


def reexport(entry_id: str, output, *, force: bool = False, progress=None, should_cancel=None):
    """Make the release ``entry_id`` again, bit for bit, from its kept key (no new ε is spent): reads the
    same input (its loaded series must have the recorded digest), the same landmarks, settings and options.
    A batch person is read again from the table as one person (one input file only)."""
    from ..data.loader import load_series
    from ..data.series import LoadError
    from ..kernel.dummies import DummySettings
    from ..kernel.settings import PrivacySettings
    from .export import ExportOptions, export_release
    from .keys import series_digest

    e = find(entry_id)
    if not e.get("key") or not e.get("recipe"):
        raise LedgerError(f"release {e['id']} was made with fresh randomness (no kept key): it cannot be made "
                          "again; a new export would be a new release")
    if e.get("key_binding") != KEY_BINDING or not e.get("input_digest"):
        raise LedgerError(f"release {e['id']} was made before export keys were bound to the release (issue 42): "
                          "its noise cannot be drawn again; a new export would be a new release")
    if not e.get("input_path"):
        raise LedgerError(f"release {e['id']} was made by a batch over {len(e.get('input_paths') or [])} input "
                          "files: its person cannot be read again from one file")
    r = e["recipe"]
    settings = PrivacySettings.from_dict(r["settings"])
    load = {k: v for k, v in r["columns"].items() if v is not None}
    if settings.categories is not None:
        load["categories"] = list(settings.categories)
    try:
        series = load_series(e["input_path"], **load)
    except (LoadError, OSError) as err:
        raise LedgerError(f"release {e['id']}: cannot read its input again: {' '.join(str(err).split())}") from None
    if r.get("resolution"):  # the periods do not depend on the landmarks (the recipe's are the periods')
        from ..data.periods import to_periods

        res = r["resolution"]
        series = to_periods(series, [], res["resolution"], res["aggregate"], sensitivity=settings.sensitivity,
                            bounds=tuple(res["bounds"]) if res["bounds"] else None).series
    if series_digest(series) != e["input_digest"]:
        raise LedgerError(f"the data read from {e['input_path']} differ from those of release {e['id']} (their "
                          "digest differs); the same release cannot be made from them")
    o = dict(r["options"])
    dummies = DummySettings(**o.pop("dummies")) if o.get("dummies") else None
    o.pop("dummies", None)
    # Entries from before denoising existed wrote the raw release: make that again, bit for bit.
    o.setdefault("denoise", False)
    opts = ExportOptions(seed=bytes.fromhex(e["key"]), force=force, dummies=dummies, reexport_of=e["id"], **o)
    return export_release(series, np.asarray(r["landmarks"], dtype=np.int64), settings, output, opts,
                          progress=progress, should_cancel=should_cancel)
