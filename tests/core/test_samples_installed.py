"""The bundled samples reach an installed (not editable) copy: pyproject ships them as data files, and
``lmdk_gui.samples`` finds them there when no checkout is beside the package."""

from __future__ import annotations

import glob
import tomllib

from lmdk_gui.samples import SAMPLE_FILES, SAMPLES, samples_folder
from tests.conftest import ROOT


def test_every_sample_is_shipped_as_a_data_file():
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {p for pattern in data_files["share/lmdk_gui/samples"] for p in glob.glob(str(ROOT / pattern))}
    for file, _options in SAMPLE_FILES.values():
        assert str(SAMPLES / file) in shipped, file
    assert str(SAMPLES / "SOURCES.md") in shipped  # (the sources and licences go with the data)


def test_the_checkout_first_then_the_installed_copy(tmp_path):
    package, prefix = tmp_path / "site" / "lmdk_gui", tmp_path / "env"
    package.mkdir(parents=True)
    installed = prefix / "share" / "lmdk_gui" / "samples"
    assert samples_folder(package, str(prefix)) == package.parent / "resources" / "samples"  # neither: as before
    installed.mkdir(parents=True)
    assert samples_folder(package, str(prefix)) == installed
    (package.parent / "resources" / "samples").mkdir(parents=True)
    assert samples_folder(package, str(prefix)) == package.parent / "resources" / "samples"
