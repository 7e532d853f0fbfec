"""What the window shows before any series is open: a centred "Open a file… / Try a sample" panel.

It replaces the plots (no empty axes) until the session has a series. Object names: ``emptyState``,
``emptyOpenButton`` and ``sample_<name>Button`` for each bundled sample.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

#: Button text and a plain description of each bundled sample (keys as in ``lmdk-gui --sample``).
SAMPLE_TEXT = {
    "energy": ("energy", "hourly electricity use of one household, January 2013 (numbers)"),
    "gps": ("GPS", "one bus ride in Limerick, 2019 (locations)"),
    "contacts": ("contacts", "whom one high-school student met, 2012 (labels)"),
}


class EmptyState(QWidget):
    openRequested = Signal()
    sampleRequested = Signal(str)  # a key of SAMPLE_TEXT

    TITLE = "<h2>Open a time series to begin</h2>"

    def __init__(self, samples: dict[str, Path], parent=None) -> None:
        """``samples`` maps a sample's key to its file; a sample whose file is missing is disabled."""
        super().__init__(parent)
        self.setObjectName("emptyState")
        panel = QFrame()
        panel.setObjectName("emptyStatePanel")
        panel.setFrameShape(QFrame.Shape.StyledPanel)
        panel.setMinimumWidth(380)
        panel.setMaximumWidth(600)
        lay = QVBoxLayout(panel)
        lay.setContentsMargins(28, 24, 28, 24)
        lay.setSpacing(12)

        title = self.title = QLabel(self.TITLE)
        title.setObjectName("emptyStateTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(title)
        what = QLabel("A CSV or TSV file or an Excel workbook with a time column and, per row, a number, a "
                      "location (lat, lon) or a label; or a GPX track. You can also drop a file on this window.")
        what.setWordWrap(True)
        what.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(what)

        self.open_button = QPushButton("Open a file…")
        self.open_button.setObjectName("emptyOpenButton")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.openRequested)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.open_button)
        row.addStretch(1)
        lay.addLayout(row)

        lay.addSpacing(6)
        lay.addWidget(QLabel("Try a sample:"), alignment=Qt.AlignmentFlag.AlignHCenter)
        self.sample_buttons: dict[str, QPushButton] = {}
        grid = QGridLayout()
        grid.setHorizontalSpacing(18)
        for col, (key, path) in enumerate(samples.items()):
            text, description = SAMPLE_TEXT.get(key, (key, ""))
            b = QPushButton(text)
            b.setObjectName(f"sample_{key}Button")
            b.setFlat(True)
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.setStyleSheet("QPushButton { color: palette(link); text-decoration: underline; font-weight: bold;"
                            " padding: 2px 6px; }")
            available = Path(path).is_file()
            b.setEnabled(available)
            b.setToolTip(f"Open {Path(path).name}" if available else f"Not found: {path}")
            b.clicked.connect(lambda _=False, k=key: self.sampleRequested.emit(k))
            self.sample_buttons[key] = b
            caption = QLabel(f"<small>{description}</small>")
            caption.setWordWrap(True)
            caption.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            grid.addWidget(b, 0, col, alignment=Qt.AlignmentFlag.AlignHCenter)
            grid.addWidget(caption, 1, col)
            grid.setColumnStretch(col, 1)
        lay.addLayout(grid)
        hint = QLabel("Help › Guide (F1) explains the five steps from a file to a protected release.")
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint.setWordWrap(True)
        lay.addWidget(hint)

        # Stretches rather than an alignment flag: an aligned widget gets its plain size hint, which ignores
        # the height its wrapped labels need at the panel's width.
        centred = QHBoxLayout()
        centred.addStretch(1)
        centred.addWidget(panel, 4)
        centred.addStretch(1)
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        outer.addLayout(centred)
        outer.addStretch(2)

    def show_loading(self, name: str | None) -> None:
        """The title while file ``name`` loads in the background (a 10^7-row file: seconds), else the
        invitation to open one."""
        self.title.setText(self.TITLE if name is None else f"<h2>Opening {html.escape(name)}…</h2>")
