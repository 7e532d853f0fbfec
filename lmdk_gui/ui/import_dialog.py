"""The import dialog: a table of the file's first rows, the column choices and the detected kind."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from ..core.loader import TablePreview

_NONE = "(none)"


class ImportDialog(QDialog):
    """Shows a :class:`TablePreview`; ``options()`` returns keyword arguments for ``load_series``."""

    def __init__(self, preview: TablePreview, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("importDialog")
        self.preview = preview
        self.setWindowTitle(f"Open {preview.path}")
        self.resize(760, 520)
        lay = QVBoxLayout(self)

        table = QTableWidget(len(preview.head), len(preview.columns))
        table.setObjectName("importPreviewTable")
        table.setHorizontalHeaderLabels([str(c) for c in preview.columns])
        for r in range(len(preview.head)):
            for c, col in enumerate(preview.columns):
                v = preview.head.iloc[r][col] if col in preview.head.columns else ""
                table.setItem(r, c, QTableWidgetItem("" if v is None else str(v)))
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        lay.addWidget(QLabel(f"First {len(preview.head)} rows (delimiter {preview.delimiter!r}):"))
        lay.addWidget(table, 1)

        box = QGroupBox("Columns")
        form = QFormLayout(box)
        g = preview.guess
        cols = [str(c) for c in preview.columns]
        self.kind = QComboBox()
        self.kind.addItems(["numeric", "location", "categorical"])
        if g.kind:
            self.kind.setCurrentText(g.kind)
        self.time_col = self._combo(cols, g.time_col, allow_none=False)
        self.hour_col = self._combo(cols, g.hour_col)
        self.value_col = self._combo(cols, g.value_col)
        self.lat_col = self._combo(cols, g.lat_col)
        self.lon_col = self._combo(cols, g.lon_col)
        self.duplicates = QComboBox()
        for label, key in (("stop with an error", "error"), ("keep the first", "first"),
                           ("keep the last", "last"), ("mean (numeric)", "mean")):
            self.duplicates.addItem(label, key)
        form.addRow("Kind", self.kind)
        form.addRow("Time column", self.time_col)
        form.addRow("Hour column (date + hour files)", self.hour_col)
        self.value_label = QLabel("Value column")
        form.addRow(self.value_label, self.value_col)
        row = QHBoxLayout()
        row.addWidget(QLabel("lat"))
        row.addWidget(self.lat_col, 1)
        row.addWidget(QLabel("lon"))
        row.addWidget(self.lon_col, 1)
        self.latlon_label = QLabel("Location columns")
        form.addRow(self.latlon_label, row)
        form.addRow("Repeated timestamps", self.duplicates)
        lay.addWidget(box)

        self.notes = QLabel("\n".join(preview.notes))
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet("color: #a05a00;")
        self.notes.setVisible(bool(preview.notes))
        lay.addWidget(self.notes)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.kind.currentTextChanged.connect(self._kind_changed)
        self._kind_changed(self.kind.currentText())

    @staticmethod
    def _combo(cols: list[str], current: str | None, allow_none: bool = True) -> QComboBox:
        c = QComboBox()
        if allow_none:
            c.addItem(_NONE)
        c.addItems(cols)
        if current:
            c.setCurrentText(current)
        return c

    def _kind_changed(self, kind: str) -> None:
        loc = kind == "location"
        for w in (self.lat_col, self.lon_col, self.latlon_label):
            w.setEnabled(loc)
        for w in (self.value_col, self.value_label):
            w.setEnabled(not loc)

    @staticmethod
    def _val(c: QComboBox) -> str | None:
        t = c.currentText()
        return None if t == _NONE or not t else t

    def options(self) -> dict:
        kind = self.kind.currentText()
        opts: dict = {"time_col": self._val(self.time_col), "hour_col": self._val(self.hour_col), "kind": kind,
                      "duplicates": self.duplicates.currentData()}
        if kind == "location":
            opts["lat_col"] = self._val(self.lat_col)
            opts["lon_col"] = self._val(self.lon_col)
        else:
            opts["value_col"] = self._val(self.value_col)
        return {k: v for k, v in opts.items() if v is not None}
