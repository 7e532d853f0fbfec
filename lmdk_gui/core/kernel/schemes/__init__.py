"""The scheme registry (issue 43): one module per scheme, each defining ``SCHEME`` (a :class:`Scheme`).

Every list of schemes in the app derives from :data:`SCHEMES` — ``settings.ALL_SCHEMES``,
``LANDMARK_SCHEMES``, ``SCHEME_LABELS``, ``release.fixed_budgets``, the views' colours, the help texts, the
lean session's drops (``REMADE_BY_EDIT``), the export's republishing warning. Adding a scheme is one module here plus its
test (docs/development.md walks through one); tests/core/test_scheme_registry.py checks that every
registered scheme has what the views and the export need.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import BudgetsFn, Scheme, baseline, constant_budgets


def _discover() -> dict[str, Scheme]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name != "base":
            found.append(importlib.import_module(f"{__name__}.{info.name}").SCHEME)
    found.sort(key=lambda s: s.position)
    names = [s.name for s in found]
    positions = [s.position for s in found]
    if len(set(names)) != len(names) or len(set(positions)) != len(positions):
        raise RuntimeError(f"two scheme modules share a name or a position: {names}, {positions}")
    return {s.name: s for s in found}


#: Every scheme, by name, in display order.
SCHEMES: dict[str, Scheme] = _discover()
#: The schemes a landmark edit makes anew whole (``Scheme.remade_by_edit``: every budget changes), whose releases
#: a lean session drops at the edit (core.engine.memory); Skip's is patched from the last one, Event's and User's
#: stay.
REMADE_BY_EDIT: frozenset[str] = frozenset(k for k, s in SCHEMES.items() if s.remade_by_edit)

__all__ = ["REMADE_BY_EDIT", "SCHEMES", "BudgetsFn", "Scheme", "baseline", "constant_budgets"]
