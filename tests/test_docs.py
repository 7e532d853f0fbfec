"""The documentation a newcomer reads: the README stays short, and no page points at a file that is not here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_every_relative_link_resolves():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert broken == []


def test_no_reference_to_files_outside_the_repo():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert "DESIGN" not in text, page.name
        assert "../shared" not in text, page.name


def test_readme_lists_the_debian_packages_ci_installs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    wanted = set()
    for name in ("QT_DEBS", "XCB_DEBS"):
        wanted |= set(re.search(rf'^{name}="([^"]*)"', ci, re.M).group(1).split())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"sudo apt-get install (.*?)```", readme, re.S).group(1)
    assert set(block.replace("\\", " ").split()) == wanted


def test_the_readme_install_works_for_a_newcomer_as_root_and_as_a_user():
    """A newcomer's stumbles: `sudo` alone fails as root, apt needs its lists first, and the commands are not
    on PATH after `pip install` into a venv."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "apt-get update" in text
    assert "As root" in text and "leave out `sudo`" in text
    assert ".venv/bin/lmdk" in text and "source .venv/bin/activate" in text


def test_every_duplicates_policy_is_in_the_cli_docs():
    """`drop-exact` was missing from docs/cli.md."""
    from lmdk_gui.core.data.loader import DUPLICATE_POLICIES

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert all(p in text for p in DUPLICATE_POLICIES), DUPLICATE_POLICIES
