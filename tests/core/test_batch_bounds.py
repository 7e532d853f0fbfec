"""A batch never publishes bounds taken from one person's values ("From data"): they would appear in every
person's release, and each sidecar would call them that person's own (issue 43's review of the one door)."""

from __future__ import annotations

import pytest

from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish.batch_base import BatchError, BatchOptions


def _options(**settings) -> BatchOptions:
    return BatchOptions(id_col="id", scheme="skip", settings=PrivacySettings(epsilon=1.0, **settings))


def test_bounds_from_data_are_refused_before_anything_runs():
    with pytest.raises(BatchError, match=r"taken from one person's values.*give public bounds \(--bounds LO HI\)"):
        _options(bounds=(0.0, 5.0), bounds_from_data=True).validate()


def test_public_bounds_and_no_bounds_pass():
    _options(bounds=(0.0, 5.0)).validate()
    _options().validate()
