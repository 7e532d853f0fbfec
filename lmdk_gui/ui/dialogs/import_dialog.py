"""The import dialog: the file's first rows, the column choices, and what the whole file holds.

A scan of the whole file (:func:`lmdk_gui.core.data.loader.scan_table`, on a worker thread, redone when a column
choice changes) flags repeated timestamps, exact duplicate rows and missing values *before* Open, next to
the choice that resolves each; a contact log gets a person chooser fed by the scan's ids and row counts.
Open loads inside the dialog (also on a worker): a failure shows its one-line message here and keeps every
choice, success leaves the series in :attr:`ImportDialog.series`. The dialog words things for the app; the
decisions (which policies apply, what is a contact log) are the core loader's.
"""

from __future__ import annotations

import re
from datetime import datetime

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
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
    QWidget,
)
from superqt.utils import qdebounced, signals_blocked

from ...core.data.loader import TablePreview, TableScan, order_note, pair_columns, scan_table
from ...core.data.series import LoadError, Series
from ...core.data.timeparse import DATE_ORDER_CHOICE
from ..views.plots import load_for_view
from ..window.runner import LatestOnlyRunner
from .person_chooser import PersonChooser

_NONE = "(none)"
_DATE_ORDERS = (("choose…", None), ("day/month/year", "dmy"), ("month/day/year", "mdy"))
_DATE_EXAMPLE = re.compile(r"dates like (.+?) read either way")
_POLICIES = (("keep the first", "first"), ("keep the last", "last"), ("mean (numbers only)", "mean"),
             ("drop exact copies only", "drop-exact"), ("stop with an error", "error"))
# Row colours in the preview table (light, so that the text stays readable).
_FLAG_COLOURS = {"repeated": QColor("#ffe2b3"), "exact": QColor("#e4e4e4"), "missing": QColor("#ffd0d0")}
_WARN = "color: #8a4b00;"
_ORDER_NOTE = order_note(0).split(" (")[0]  # the preview's note on rows out of time order, without the row
_ERROR = "color: #b00020;"


def _rows_text(lines: tuple[int, ...], total: int, k: int = 3) -> str:
    """``rows 57, 58, …`` (the first ``k`` of ``total``)."""
    shown = ", ".join(str(x) for x in lines[:k])
    return f"row{'s' if total > 1 else ''} {shown}" + (", …" if total > k else "")


class ImportDialog(QDialog):
    """Shows a :class:`TablePreview` and a whole-file scan; ``options()`` are keyword arguments for
    ``load_series``; after Open succeeded, ``series`` holds the loaded series."""

    scanned = Signal()  # a scan result was shown
    loaded = Signal()  # Open succeeded (the dialog then accepts)
    loadFailed = Signal(str)  # Open failed; the message is shown in the dialog

    def __init__(self, preview: TablePreview, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importDialog")
        self.preview = preview
        self.scan: TableScan | None = None
        self.series: Series | None = None
        self._policy_chosen = False  # the user picked a policy: later scans keep it
        self.setWindowTitle(f"Open {preview.path}")
        self.resize(860, 720)
        lay = QVBoxLayout(self)
        where = f"sheet '{preview.sheet}' of the workbook" if preview.sheet else f"delimiter {preview.delimiter!r}"
        lay.addWidget(QLabel(f"First {len(preview.head)} rows ({where}), then the rows the checks below found; "
                             "row numbers as in the file:"))
        self.table = self._make_table(preview)
        self._row_lines = list(preview.head_lines)  # file line of each table row
        lay.addWidget(self.table, 1)
        lay.addWidget(self._make_columns(preview))
        lay.addWidget(self._make_checks())

        # What must still be chosen is said by the scan (for the current choices), not by the static notes;
        # so is whether the rows are in time order (the preview saw only the first rows).
        self._notes = [n for n in preview.notes if n not in preview.problems and not n.startswith(_ORDER_NOTE)]
        self.notes = QLabel("\n".join(self._notes))
        self.notes.setObjectName("importNotes")
        self.notes.setWordWrap(True)
        self.notes.setVisible(bool(self._notes))
        lay.addWidget(self.notes)
        self.error = QLabel()
        self.error.setObjectName("importError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet(_ERROR)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        lay.addWidget(self.error)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.open_button = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        self.open_button.setObjectName("importOpenButton")
        self._update_open()
        self.buttons.accepted.connect(self.load)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

        self._scanner = LatestOnlyRunner("import-scan", self, finished=self._on_scanned,
                                         failed=lambda _g, msg: self._show_error(msg))
        self._loader = LatestOnlyRunner("import-load", self, finished=self._on_loaded, failed=self._on_load_failed)
        self._connect()
        self._kind_changed()
        self._show_id_state()
        self._rescan_now()

    # ------------------------------------------------------------------------------------------ layout
    @staticmethod
    def _make_table(preview: TablePreview) -> QTableWidget:
        table = QTableWidget(len(preview.head), len(preview.columns))
        table.setObjectName("importPreviewTable")
        table.setHorizontalHeaderLabels([str(c) for c in preview.columns])
        # the file's own rows (pandas skips blank lines and a sheet's title rows)
        table.setVerticalHeaderLabels([str(line) for line in preview.head_lines])
        for r in range(len(preview.head)):
            for c, col in enumerate(preview.columns):
                v = preview.head.iloc[r][col] if col in preview.head.columns else ""
                table.setItem(r, c, QTableWidgetItem("" if v is None or v != v else str(v)))
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)  # a preview: nothing to select
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        table.setMinimumHeight(8 * (table.fontMetrics().height() + 6) + table.horizontalHeader().sizeHint().height())
        return table

    def _make_columns(self, preview: TablePreview) -> QGroupBox:
        box = QGroupBox("Columns")
        form = QFormLayout(box)
        g = preview.guess
        cols = [str(c) for c in preview.columns]
        self.kind = QComboBox()
        self.kind.setObjectName("importKind")
        self.kind.addItems(["numeric", "location", "categorical"])
        if g.kind:
            self.kind.setCurrentText(g.kind)
        self.time_col = self._combo(cols, g.time_col, allow_none=False)
        self.hour_col = self._combo(cols, g.hour_col)
        self.value_col = self._combo(cols, g.value_col)
        self.lat_col = self._combo(cols, g.lat_col)
        self.lon_col = self._combo(cols, g.lon_col)
        form.addRow("Kind", self.kind)
        form.addRow("Time column", self.time_col)
        self.date_order = QComboBox()
        self.date_order.setObjectName("importDateOrder")
        for label, key in _DATE_ORDERS:
            self.date_order.addItem(label, key)
        self.date_order.setToolTip("Every date of the file fits both day/month and month/day: say which it is")
        self.date_order_label = QLabel("Date order")
        self.date_order_label.setStyleSheet(_WARN)
        form.addRow(self.date_order_label, self.date_order)
        self._columns_form = form
        # asked only when every date reads both ways (the first rows tell the preview; the scan, the whole file)
        self._date_order_needed = any(p.endswith(DATE_ORDER_CHOICE) for p in preview.problems)
        form.setRowVisible(self.date_order, self._date_order_needed)
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
        self._make_id_rows(form, cols, preview)
        form.addRow(self._make_contacts(cols, preview))
        return box

    def _make_id_rows(self, form: QFormLayout, cols: list[str], preview: TablePreview) -> None:
        """A long table of many persons: the id column, and the one person to open (the others stay in the
        file; File › Switch person… and Export all persons… reach them)."""
        self.id_col = self._combo(cols, preview.guess.id_col)
        self.id_col.setObjectName("importIdCol")
        self.id_col.setToolTip("A column naming the person or household of each row: the app opens one "
                               "person's series at a time")
        form.addRow("Person / household id column", self.id_col)
        self.id_person = PersonChooser()
        self.id_person.setObjectName("importPersonId")
        self.id_person.setPlaceholderText("reading the ids…")
        self.id_person.setToolTip("Type to search; the number is the person's rows in the whole file")
        self.id_person_label = QLabel("Person to open")
        form.addRow(self.id_person_label, self.id_person)
        self._id_form = form

    def _make_contacts(self, cols: list[str], preview: TablePreview) -> QGroupBox:
        """A contact log (two person-id columns): follow one person; the value is the other of each contact."""
        g = preview.guess
        box = QGroupBox("Contact log: the contacts of one person")
        box.setObjectName("importContacts")
        box.setCheckable(True)
        box.setChecked(g.pair_cols is not None)
        candidates = pair_columns(cols)
        box.setVisible(g.pair_cols is not None or bool(candidates))  # offered only where two columns pair up
        form = QFormLayout(box)
        pair = g.pair_cols or (candidates or [(None, None)])[0]
        self.pair_a = self._combo(cols, pair[0], allow_none=False)
        self.pair_b = self._combo(cols, pair[1], allow_none=False)
        ids = QHBoxLayout()
        ids.addWidget(self.pair_a, 1)
        ids.addWidget(QLabel("and"))
        ids.addWidget(self.pair_b, 1)
        form.addRow("Person ids in", ids)
        self.person = PersonChooser()
        self.person.setPlaceholderText("reading the ids…")
        form.addRow("Person", self.person)
        self.pair_value = QComboBox()
        self.pair_value.setObjectName("importPairValue")
        self.pair_value.addItem("the other person's id", None)
        for ca, cb in pair_columns([c for c in cols if c not in pair]):
            self.pair_value.addItem(f"the other person's class ({ca}, {cb})", (ca, cb))
        form.addRow("Value", self.pair_value)
        self.contacts = box
        return box

    def _make_checks(self) -> QGroupBox:
        box = QGroupBox("Whole file")
        self.checks_box = box
        form = QFormLayout(box)
        self.scan_status = QLabel("Checking the whole file…")
        self.scan_status.setObjectName("importScanStatus")
        form.addRow(self.scan_status)
        self.repeated = QLabel()
        self.repeated.setObjectName("importRepeated")
        self.repeated.setWordWrap(True)
        self.repeated.setStyleSheet(_WARN)
        self.duplicates = QComboBox()
        self.duplicates.setObjectName("importDuplicates")
        for label, key in _POLICIES:
            self.duplicates.addItem(label, key)
        self.duplicates.setCurrentIndex(self.duplicates.findData("error"))
        form.addRow(self.repeated)
        form.addRow("Repeated timestamps", self.duplicates)
        self.exact = QLabel()
        self.exact.setObjectName("importExact")
        self.exact.setWordWrap(True)
        form.addRow(self.exact)
        self.skip_missing = QCheckBox("Skip rows with missing values")
        self.skip_missing.setObjectName("importSkipMissing")
        self.missing = QLabel()
        self.missing.setObjectName("importMissing")
        self.missing.setWordWrap(True)
        self.missing.setStyleSheet(_WARN)
        form.addRow(self.missing)
        form.addRow(self.skip_missing)
        for w in (self.repeated, self.exact, self.missing, self.skip_missing):
            w.hide()
        return box

    @staticmethod
    def _combo(cols: list[str], current: str | None, allow_none: bool = True) -> QComboBox:
        c = QComboBox()
        if allow_none:
            c.addItem(_NONE)
        c.addItems(cols)
        if current:
            c.setCurrentText(current)
        return c

    def _connect(self) -> None:
        for c in (self.time_col, self.hour_col, self.lat_col, self.lon_col, self.pair_a, self.pair_b,
                  self.pair_value):
            c.currentIndexChanged.connect(self._rescan)
        self.id_col.currentIndexChanged.connect(self._id_col_changed)
        self.id_person.currentIndexChanged.connect(self._rescan)
        self.kind.currentTextChanged.connect(self._kind_changed)
        self.kind.currentTextChanged.connect(self._rescan)
        self.value_col.currentTextChanged.connect(self._value_changed)
        self.contacts.toggled.connect(self._contacts_toggled)
        self.person.currentIndexChanged.connect(self._rescan)
        self.date_order.currentIndexChanged.connect(self._date_order_changed)
        self.duplicates.activated.connect(self._policy_activated)
        self.skip_missing.toggled.connect(lambda _on: self.error.hide())

    # ------------------------------------------------------------------------------------ reactions
    def _kind_changed(self, *_args: object) -> None:
        kind = self.kind.currentText()
        loc = kind == "location"
        for w in (self.lat_col, self.lon_col, self.latlon_label):
            w.setEnabled(loc)
        for w in (self.value_col, self.value_label):
            w.setEnabled(not loc and not self.contacts.isChecked())
        self.kind.setEnabled(not self.contacts.isChecked())  # a contact log is read as categories
        self._update_policies(kind)

    def _update_policies(self, kind: str) -> None:
        """Mean only for numbers: the item is disabled (with the reason) for the other kinds."""
        model = self.duplicates.model()
        assert isinstance(model, QStandardItemModel)
        item = model.item(self.duplicates.findData("mean"))
        item.setEnabled(kind == "numeric")
        item.setToolTip("" if kind == "numeric" else f"a mean is not possible for a {kind} series")
        if kind != "numeric" and self.duplicates.currentData() == "mean":
            self.duplicates.setCurrentIndex(self.duplicates.findData("first"))

    def _value_changed(self, text: str) -> None:
        if text != _NONE and self.contacts.isChecked():
            self.contacts.setChecked(False)  # one value column: not a contact log reading
        self._rescan()

    def _contacts_toggled(self, on: bool) -> None:
        if on:
            with signals_blocked(self.value_col):
                self.value_col.setCurrentText(_NONE)
            self.kind.setCurrentText("categorical")
        self._kind_changed()
        self._rescan()

    def _id_col_changed(self, *_args: object) -> None:
        """Another id column: its ids come with the next scan (the previous column's person means nothing)."""
        with signals_blocked(self.id_person):
            self.id_person.set_ids((), None)
            self.id_person.setEditText("")
        self._show_id_state()
        self._rescan()

    def _show_id_state(self) -> None:
        on = self._val(self.id_col) is not None
        self.id_person.setPlaceholderText("reading the ids…")
        self._id_form.setRowVisible(self.id_person, on)  # no id column: the whole file is one series

    def _date_order_changed(self, _index: int) -> None:
        self.date_order_label.setStyleSheet("" if self.date_order.currentData() else _WARN)
        self._update_open()
        self._rescan()

    def _show_date_order(self, scan: TableScan) -> None:
        """The date order row appears once the file needs it (and stays, so that the choice can be changed);
        its items read the file's own example date both ways."""
        if scan.error_option == "date_order" and not self._date_order_needed:
            self._date_order_needed = True
            self._columns_form.setRowVisible(self.date_order, True)
        found = _DATE_EXAMPLE.search(scan.error or "") if scan.error_option == "date_order" else None
        if found:
            example = found.group(1)
            for i, (label, key) in enumerate(_DATE_ORDERS[1:], start=1):
                self.date_order.setItemText(i, f"{label}: {example} is {_read_as(example, key)}")
        self._update_open()

    def _update_open(self) -> None:
        """Open waits for a date order the file needs (loading would only ask for it)."""
        self.open_button.setEnabled(not (self._date_order_needed and self.date_order.currentData() is None))

    def _policy_activated(self, _index: int) -> None:
        self._policy_chosen = True
        self.error.hide()

    # ------------------------------------------------------------------------------------------ scan
    @qdebounced(timeout=150)
    def _rescan(self, *_args: object) -> None:
        self._rescan_now()

    def _rescan_now(self) -> None:
        self.scan_status.setText("Checking the whole file…")
        self.scan_status.show()
        opts = self.options()
        opts.pop("duplicates", None)
        opts.pop("skip_missing", None)
        self._scanner.submit(_scan_job, self.preview.path, opts)

    def _on_scanned(self, generation: int, scan: TableScan) -> None:
        if not self._scanner.is_current(generation):
            return
        self.scan = scan
        self.scan_status.hide()
        if scan.person_counts:
            self.person.set_ids(scan.person_counts, self.person.current_id() or scan.person)
        if scan.id_counts:
            self.id_person.set_ids(scan.id_counts, self.id_person.current_id() or scan.person_id)
            self.id_person_label.setText(f"Person to open ({len(scan.id_counts):,} in the file)")
        # with an id column the checks are the chosen person's (the others are checked when opened)
        self.checks_box.setTitle(f"Whole file: person {scan.person_id}'s rows" if scan.person_id else "Whole file")
        self._show_date_order(scan)
        self._show_order(scan)
        self._show_repeats(scan)
        self._show_missing(scan)
        self._show_examples(scan)
        self._flag_rows(scan)
        if scan.error_option == "date_order":  # in the dialog's words: the choice is right here
            found = _DATE_EXAMPLE.search(scan.error or "")
            self._show_error(f"Dates like {found.group(1) if found else '01/02/2013'} read either way: choose the "
                             "date order above.")
        elif scan.error is not None:  # what Open would say with these columns: say it now
            self._show_error(scan.error)
        else:
            self.error.hide()
        self.scanned.emit()

    def _show_order(self, scan: TableScan) -> None:
        """The notes, with whether the whole file (the chosen person's rows) is in time order."""
        notes = self._notes + ([scan.order_note[0].upper() + scan.order_note[1:]] if scan.order_note else [])
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))

    def _show_repeats(self, scan: TableScan) -> None:
        if scan.repeated_times:
            self.repeated.setText(f"Repeated times: {scan.repeated_times:,} ("
                                  f"{_rows_text(scan.repeated_lines, scan.repeated_rows)}) — choose what to keep")
        self.repeated.setVisible(bool(scan.repeated_times))
        if scan.exact_rows:
            self.exact.setText(f"Exact duplicate rows: {scan.exact_rows:,} ("
                               f"{_rows_text(scan.exact_lines, scan.exact_rows)}) repeat an earlier row's "
                               "time and value; they are dropped.")
        self.exact.setVisible(bool(scan.exact_rows))
        something = bool(scan.repeated_times or scan.exact_rows)
        self.duplicates.setEnabled(something)
        if not self._policy_chosen or not something:
            self.duplicates.setCurrentIndex(self.duplicates.findData(scan.suggested_duplicates))

    def _show_missing(self, scan: TableScan) -> None:
        if scan.missing_rows:
            where = ", ".join(f"{c}: {n:,}" for c, n in scan.missing_by_column)
            self.missing.setText(f"Missing values: {scan.missing_rows:,} rows "
                                 f"({_rows_text(scan.missing_lines, scan.missing_rows)}; {where})")
            self.skip_missing.setText(f"Skip rows with missing values ({scan.missing_rows:,} rows)")
        self.missing.setVisible(bool(scan.missing_rows))
        self.skip_missing.setVisible(bool(scan.missing_rows))
        if not scan.missing_rows:
            self.skip_missing.setChecked(False)

    def _show_examples(self, scan: TableScan, most: int = 12) -> None:
        """Below the first rows: the flagged rows further down the file (after a "⋮" row), as written."""
        n_head = len(self.preview.head)
        self.table.setRowCount(n_head)
        self._row_lines = self._row_lines[:n_head]
        later = [line for line in sorted(scan.examples) if line > n_head + 1][:most]
        if not later:
            return
        self.table.setRowCount(n_head + 1 + len(later))
        self.table.setVerticalHeaderItem(n_head, QTableWidgetItem("⋮"))
        self._row_lines.append(-1)
        for r, line in enumerate(later, start=n_head + 1):
            self.table.setVerticalHeaderItem(r, QTableWidgetItem(str(line)))
            fields = scan.examples[line]
            for c in range(self.table.columnCount()):
                self.table.setItem(r, c, QTableWidgetItem(fields[c] if c < len(fields) else ""))
            self._row_lines.append(line)

    def _flag_rows(self, scan: TableScan) -> None:
        """Colour the preview rows the scan found, with a tooltip."""
        flags: dict[int, tuple[str, str]] = {}
        for line in scan.repeated_lines:
            flags[line] = ("repeated", "repeated time")
        for line in scan.exact_lines:
            flags[line] = ("exact", "exact duplicate of an earlier row: dropped")
        for line in scan.missing_lines:
            flags[line] = ("missing", "missing value")
        first = None
        for r in range(self.table.rowCount()):
            flag = flags.get(self._row_lines[r])
            first = r if first is None and flag else first
            for c in range(self.table.columnCount()):
                item = self.table.item(r, c)
                if item is None:
                    continue
                item.setBackground(_FLAG_COLOURS[flag[0]] if flag else QColor(0, 0, 0, 0))
                item.setToolTip(flag[1] if flag else "")
        if first is not None and first >= len(self.preview.head):
            # the flagged rows are below the first rows: bring them into view (after the new rows' layout)
            QTimer.singleShot(0, self.table.scrollToBottom)

    # ------------------------------------------------------------------------------------------ load
    def load(self) -> None:
        """Open: load with the current choices on a worker; the dialog closes only when that worked."""
        self.error.hide()
        self.open_button.setEnabled(False)
        self.scan_status.setText("Loading…")
        self.scan_status.show()
        self._loader.submit(_load_job, self.preview.path, self.options())

    def _on_loaded(self, generation: int, series: Series | LoadError) -> None:
        if not self._loader.is_current(generation):
            return
        if isinstance(series, LoadError):
            self._on_load_failed(generation, str(series))
            return
        self._update_open()
        self.series = series
        self.loaded.emit()
        self.accept()

    def _on_load_failed(self, generation: int, message: str) -> None:
        if not self._loader.is_current(generation):
            return
        self._update_open()
        self.scan_status.hide()
        msg = message.split(": ", 1)[1] if message.startswith("LoadError: ") else message
        self._show_error(msg)
        self.loadFailed.emit(msg)

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def done(self, result: int) -> None:  # noqa: D401 - Qt override
        """Closing (Open, Cancel, Esc) drops pending work; a load still running is ignored."""
        for runner in (self._scanner, self._loader):
            runner.shutdown(timeout=0)  # the daemon thread ends after its current job; never wait here
        super().done(result)

    # --------------------------------------------------------------------------------------- options
    @staticmethod
    def _val(c: QComboBox) -> str | None:
        t = c.currentText()
        return None if t == _NONE or not t else t

    def options(self) -> dict:
        """Keyword arguments for :func:`lmdk_gui.core.data.loader.load_series` (only the ones that are set)."""
        kind = self.kind.currentText()
        opts: dict = {"time_col": self._val(self.time_col), "hour_col": self._val(self.hour_col), "kind": kind,
                      "duplicates": self.duplicates.currentData()}
        if self.skip_missing.isChecked():
            opts["skip_missing"] = True
        if self._date_order_needed:
            opts["date_order"] = self.date_order.currentData()
        if self._val(self.id_col) is not None:
            opts["id_col"] = self._val(self.id_col)
            opts["person_id"] = self.id_person.current_id()
        if self.contacts.isChecked():
            opts["kind"] = "categorical"
            opts["pair_cols"] = (self.pair_a.currentText(), self.pair_b.currentText())
            opts["person"] = self.person.current_id()
            opts["pair_class_cols"] = self.pair_value.currentData()
        elif kind == "location":
            opts["lat_col"] = self._val(self.lat_col)
            opts["lon_col"] = self._val(self.lon_col)
        else:
            opts["value_col"] = self._val(self.value_col)
        return {k: v for k, v in opts.items() if v is not None}


def _read_as(example: str, order: str | None) -> str:
    """``01/02/2013`` read day first -> ``1 February 2013``; month first -> ``January 2, 2013``."""
    first, second, year = (int(x) for x in example.split()[0].split("/"))
    try:
        when = datetime(year, second, first) if order == "dmy" else datetime(year, first, second)
    except ValueError:  # (the loader only asks about dates that fit both orders)
        return example
    return f"{when.day} {when:%B %Y}" if order == "dmy" else f"{when:%B} {when.day}, {year}"


def _scan_job(path: str, options: dict, *, should_cancel=None) -> TableScan:
    return scan_table(path, **options)


def _load_job(path: str, options: dict, *, should_cancel=None) -> Series | LoadError:
    """A bad file is an answer here, not a crash: returned (no traceback on stderr) and shown in the dialog."""
    try:
        return load_for_view(path, options)  # on the loader's thread, with the series line's pyramid
    except LoadError as exc:
        return exc
