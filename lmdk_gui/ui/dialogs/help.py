"""Help › Guide (F1), Keyboard shortcuts and About: one non-modal dialog with three tabs.

The guide's text lives in plain dicts so a new scheme or term is one entry: :data:`SCHEME_HELP` maps a scheme
id (as in ``core.settings``) to its meaning in plain words and one example. The shortcut list is generated
from the window's actual QActions each time it is shown, so it cannot drift from the menus.
Object names: ``helpGuide`` (the dialog), ``helpTabs``, ``guideText``, ``shortcutTable``, ``aboutText``.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
)

from ... import __version__
from ...core.kernel.schemes import SCHEMES
from ...core.kernel.settings import SCHEME_LABELS

#: The workflow, in five steps: (title, what to do).
WORKFLOW = (
    ("Open a series", "File › Open series… (or drop a CSV/TSV, Excel .xlsx or GPX file on the window). The "
                      "import dialog shows the first rows; check the time column, the value column and the kind "
                      "(number, location, label)."),
    ("Mark the landmarks", "Click an event on the top plot to mark or unmark it; Shift-drag marks a time range, "
                           "Ctrl-drag unmarks one. Landmarks › Suggest proposes landmarks from simple rules. A "
                           "release shows where its landmarks are unless dummy landmarks hide them, so landmarks "
                           "a rule found from your values tell which events passed it."),
    ("Set the privacy budget", "In the Settings dock on the left: ε, and Δ (numbers) or r (locations)."),
    ("Compare the schemes", "The budget bars show how each scheme spends ε over time, the preview shows a noisy "
                            "release beside the original, the metrics table shows the error and checks the "
                            "guarantee."),
    ("Export", "File › Export protected CSV… writes the release of the scheme you choose and a metadata "
               "file that says what was guaranteed. Nothing is written if the check fails."),
)

#: Terms: (symbol or name, meaning in plain words, one example).
TERMS = (
    ("Landmarks", "The events that matter most, such as a visit to a clinic or a night away from home. They "
                  "are protected together: all the landmarks plus any one other event share the budget ε.",
     "You mark the 3 hours a home was empty: an observer of the release learns about as little about those "
     "3 hours together as ε allows for a single event."),
    ("ε (epsilon)", "The total privacy budget: how much the release may reveal about the landmarks plus any one "
                    "event. Smaller ε means more noise and more privacy; each event spends a share ε_t.",
     "ε = 1 is a common choice; ε = 0.1 gives roughly ten times more noise to every event."),
    ("Δ (sensitivity)", "For numbers: the largest change of one event's value that must be hidden. The noise "
                        "added to an event is about Δ/ε_t.",
     "Hourly meter readings up to 5 kWh: Δ = 5 hides any single reading completely; Δ = 1 hides changes "
     "up to 1 kWh."),
    ("r (radius)", "For locations: places closer than r metres should be hard to tell apart. A released "
                   "point is moved by about 2·r/ε_t metres on average, in a random direction.",
     "r = 100 m and ε_t = 0.5: a reported position lies about 400 m from the true one."),
)

#: Scheme id → (what it does in plain words, one example), from the scheme registry.
SCHEME_HELP: dict[str, tuple[str, str]] = {s.name: s.help for s in SCHEMES.values()}

#: Mouse gestures on the series plot (not QActions, so listed by hand): (what it does, how).
GESTURES = (
    ("Series plot › mark or unmark an event", "Click the event"),
    ("Series plot › mark every event in a time range", "Shift-drag"),
    ("Series plot › unmark every event in a time range", "Ctrl-drag or Alt-drag"),
    ("Series plot › pan / zoom the time axis", "Drag / mouse wheel"),
)

#: Components and their licences, shown in About (package name for the installed version, licence).
COMPONENTS = (
    ("Qt 6 and PySide6", "PySide6-Essentials", "LGPL-3.0"),
    ("pyqtgraph", "pyqtgraph", "MIT"),
    ("NumPy", "numpy", "BSD-3-Clause"),
    ("pandas", "pandas", "BSD-3-Clause"),
    ("SciPy", "scipy", "BSD-3-Clause"),
    ("Numba", "numba", "BSD-2-Clause"),
    ("OpenDP", "opendp", "MIT"),
    ("superqt", "superqt", "BSD-3-Clause"),
)

#: The bundled samples' sources and licences (as recorded in resources/samples/SOURCES.md).
DATA_LICENCES = (
    ("energy", "HUE hourly energy data set, residence 1 (Makonin, Data in Brief 23, 2019)",
     "no licence stated by the copy used; the HUE scripts are MIT"),
    ("GPS", "bus 304 ride in Limerick, 18 Feb 2019, recorded by B.A. MacGabhann (movingpandas tutorials)",
     "\"Usage restrictions: None\"; repository BSD-3-Clause"),
    ("contacts", "SocioPatterns high-school contacts 2012 (Fournet & Barrat, PLoS ONE 9(9), 2014)",
     "CC BY-NC-SA: non-commercial, share-alike"),
)


def guide_html() -> str:
    e = html.escape
    steps = "".join(f"<li><b>{e(t)}.</b> {e(d)}</li>" for t, d in WORKFLOW)
    terms = "".join(f"<dt><b>{e(n)}</b></dt><dd>{e(m)}<br><i>Example:</i> {e(x)}</dd>" for n, m, x in TERMS)
    schemes = "".join(f"<dt><b>{e(SCHEME_LABELS.get(k, k.title()))}</b></dt><dd>{e(m)}<br><i>Example:</i> {e(x)}</dd>"
                      for k, (m, x) in SCHEME_HELP.items())
    return (f"<h3>From a file to a protected release in five steps</h3><ol>{steps}</ol>"
            f"<h3>Words you will meet</h3><dl>{terms}</dl>"
            f"<h3>The schemes</h3><p>Each scheme decides how much of ε every event spends (ε_t). All of them "
            f"keep the landmarks plus any one event within ε; the baselines are shown for comparison.</p>"
            f"<dl>{schemes}</dl>")


def _installed(package: str) -> str:
    from importlib import metadata  # here: ≈ 40 ms of a cold start, for the About box only

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def about_html() -> str:
    e = html.escape
    rows = "".join(f"<tr><td>{e(name)}</td><td>{e(_installed(pkg))}</td><td>{e(lic)}</td></tr>"
                   for name, pkg, lic in COMPONENTS)
    data = "".join(f"<li><b>{e(k)}</b>: {e(src)} — {e(lic)}</li>" for k, src, lic in DATA_LICENCES)
    return (f"<h3>lmdk_gui {e(__version__)}</h3>"
            "<p>Landmark privacy for personal time series (Katsomallos, Tzompanaki, Kotzinos, CODASPY 2022). "
            "lmdk_gui is under the BSD-3-Clause licence.</p>"
            f"<p>Running on Qt {e(qVersion())}.</p>"
            "<h4>Built with</h4><table cellspacing=0 cellpadding=3>"
            f"<tr><th align=left>component</th><th align=left>version</th><th align=left>licence</th></tr>{rows}"
            "</table>"
            f"<h4>Bundled sample data</h4><ul>{data}</ul>")


def _strip(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def shortcut_rows(window) -> list[tuple[str, str]]:
    """(where, keys) for every action of ``window`` that has a shortcut, in menu order, then the rest."""
    rows: list[tuple[str, str]] = []
    seen: set[int] = set()

    def keys(a: QAction) -> str:
        return " or ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in a.shortcuts())

    def walk(menu: QMenu, path: str) -> None:
        for a in menu.actions():
            if a.menu() is not None:
                walk(a.menu(), f"{path} › {_strip(a.text())}")
            elif a.shortcuts() and id(a) not in seen:
                seen.add(id(a))
                rows.append((f"{path} › {_strip(a.text())}", keys(a)))

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), _strip(top.text()))
    for a in window.findChildren(QAction):
        if a.shortcuts() and id(a) not in seen and a.text():
            seen.add(id(a))
            rows.append((_strip(a.text()), keys(a)))
    return rows


class HelpDialog(QDialog):
    TABS = ("guide", "shortcuts", "about")

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window_ = window
        self.setObjectName("helpGuide")
        self.setWindowTitle("lmdk_gui help")
        self.resize(720, 640)
        lay = QVBoxLayout(self)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("helpTabs")
        self.guide = QTextBrowser()
        self.guide.setObjectName("guideText")
        self.guide.setHtml(guide_html())
        self.shortcuts = QTableWidget(0, 2)
        self.shortcuts.setObjectName("shortcutTable")
        self.shortcuts.setHorizontalHeaderLabels(["Action", "Keys or mouse"])
        self.shortcuts.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.shortcuts.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.shortcuts.verticalHeader().hide()
        self.shortcuts.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.about = QTextBrowser()
        self.about.setObjectName("aboutText")
        self.about.setOpenExternalLinks(True)
        self.about.setHtml(about_html())
        self.tabs.addTab(self.guide, "Guide")
        self.tabs.addTab(self.shortcuts, "Keyboard shortcuts")
        self.tabs.addTab(self.about, "About")
        lay.addWidget(self.tabs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay.addWidget(buttons)

    def refresh_shortcuts(self) -> None:
        rows = shortcut_rows(self.window_) + list(GESTURES)
        self.shortcuts.setRowCount(len(rows))
        for i, (where, keys) in enumerate(rows):
            self.shortcuts.setItem(i, 0, QTableWidgetItem(where))
            self.shortcuts.setItem(i, 1, QTableWidgetItem(keys))

    def show_tab(self, name: str) -> None:
        """Open (non-modal, so the user can keep working) on tab ``guide``, ``shortcuts`` or ``about``."""
        self.refresh_shortcuts()
        self.tabs.setCurrentIndex(self.TABS.index(name))
        self.show()
        self.raise_()
        self.activateWindow()


def install_help_menu(window, menu: QMenu) -> None:
    """Add Guide (F1), Keyboard shortcuts and About to ``menu``; they open ``window.help_dialog`` (which the
    window builds on first use: it reads every component's installed version, not needed to start)."""
    for text, name, tab, key in (("&Guide", "helpAction", "guide", QKeySequence.StandardKey.HelpContents),
                                 ("&Keyboard shortcuts", "shortcutsAction", "shortcuts", None),
                                 ("&About lmdk_gui", "aboutAction", "about", None)):
        a = QAction(text, window)
        a.setObjectName(name)
        if key is not None:
            a.setShortcut(QKeySequence(key))
            a.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        a.triggered.connect(lambda _=False, t=tab: window.help_dialog.show_tab(t))
        window.addAction(a)
        menu.addAction(a)
