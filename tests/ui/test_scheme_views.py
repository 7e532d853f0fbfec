"""The views' per-scheme tables read the scheme registry (issue 43): no scheme can be missing from them."""

from __future__ import annotations

from lmdk_gui.core.engine import lean
from lmdk_gui.core.kernel.schemes import REMADE_BY_EDIT, SCHEMES
from lmdk_gui.ui.dialogs import help as help_mod
from lmdk_gui.ui.views import theme


def test_colours_help_and_memory_tables_cover_every_scheme():
    assert theme.SCHEME_COLORS == {k: s.color for k, s in SCHEMES.items()}
    assert list(theme.SCHEME_COLORS) == ["uniform", "skip", "adaptive", "balanced", "event", "user"]
    assert help_mod.SCHEME_HELP == {k: s.help for k, s in SCHEMES.items()}
    assert REMADE_BY_EDIT == frozenset({"uniform", "balanced", "adaptive"})
    assert REMADE_BY_EDIT == {k for k, s in SCHEMES.items() if s.remade_by_edit}
    assert lean.REMADE_BY_EDIT is REMADE_BY_EDIT  # (the lean book drops what the registry says)
