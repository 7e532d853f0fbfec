"""Dialog and panel helpers: modal dialogs deleted once they are closed (:func:`deleted_after`), the one look
of a wrapped note, warning or error (:func:`wrapped_label`, :func:`warning_label`, :func:`error_label`), a path
with its Browse… button (:func:`path_row`), Cancel beside the dialog's own button (:func:`accept_buttons`), the
one Yes/No box (:func:`ask_yes_no`) and the one category-list question (:func:`categories_question`), and a
call that would freeze the window run on a worker behind a busy dialog (:func:`busy_call`).

Modal dialogs are deleted once they are closed, not left to their parent window.
A closed dialog left to the window made the interpreter's exit crash in Qt's teardown (SIGSEGV or "shared
QObject was deleted directly", 5 runs of 8 after File › Export… then Cancel), and the import dialog kept the
series it had read alive. Export, Import and Export all persons run theirs inside :func:`deleted_after`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TypeVar

from PySide6.QtCore import QEvent, QEventLoop, QObject, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QWidget,
)

from ...core.kernel.settings import categories_from_data_risk
from ..window.runner import LatestOnlyRunner

T = TypeVar("T")


@contextlib.contextmanager
def deleted_after(dialog: QDialog) -> Iterator[QDialog]:
    """``with deleted_after(dlg):`` — the dialog is deleted (later, by the event loop) when the block ends."""
    try:
        yield dialog
    finally:
        dialog.deleteLater()


def wrapped_label(text: str = "", name: str = "", style: str = "") -> QLabel:
    """A word-wrapped label; ``name`` is its objectName, ``style`` its style sheet ("" for neither, Qt's default)."""
    label = QLabel(text, wordWrap=True)
    label.setObjectName(name)
    label.setStyleSheet(style)
    return label


def warning_label(text: str = "", name: str = "") -> QLabel:
    """A wrapped warning in the app's amber (what a choice gives away: landmark positions, a key, a rule's
    landmarks, categories from the data)."""
    return wrapped_label(text, name, "color: #a05a00;")


def error_label(name: str) -> QLabel:
    """A wrapped error in the app's red, hidden until there is something to say."""
    label = wrapped_label("", name, "color: #c00000;")
    label.hide()
    return label


def path_row(edit: QLineEdit, browse: Callable[[], object]) -> QWidget:
    """A path's line edit with a Browse… button beside it (``browse`` asks for the path): one row of a form."""
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(edit, 1)
    button = QPushButton("Browse…")
    button.clicked.connect(lambda: browse())  # (not the checked flag clicked passes)
    lay.addWidget(button)
    return row


def accept_buttons(dialog: QDialog, text: str, accept: Callable[[], object]) -> tuple[QDialogButtonBox, QPushButton]:
    """Cancel, and a button named for what the dialog does (``text``), which calls ``accept``: the dialog's
    own checks and questions before it accepts. Returns the box and that button."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    button = buttons.addButton(text, QDialogButtonBox.ButtonRole.AcceptRole)
    buttons.accepted.connect(accept)
    buttons.rejected.connect(dialog.reject)
    return buttons, button


def ask_yes_no(parent: QWidget | None, title: str, question: str) -> bool:
    """The app's Yes/No box; No is the default, so a stray Enter never agrees."""
    ans = QMessageBox.question(parent, title, question,
                               QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                               QMessageBox.StandardButton.No)
    return ans == QMessageBox.StandardButton.Yes


def categories_question(n_labels: int | None) -> str:
    """The one question asked before releases publish the data's own category list (the commands'
    ``--categories-from-data``): by Export… (``n_labels``: the series' labels) and by Export all persons…
    (None: the list is the union of every person's labels, which only the run reads)."""
    if n_labels is None:
        risk = ("the category list would come from the whole table (the union of all persons' labels, the same "
                "list in every person's release) and be published whole, including labels that occur only once")
    else:
        risk = categories_from_data_risk(n_labels)
    return (f"No public category list was given: {risk}. Randomized response can output any listed category, "
            f"so the list is part of what is published. Publish it with the release{'s' if n_labels is None else ''}?")


def ask_publish_categories(parent: QWidget | None, question: str) -> bool:
    """What every ``ask_categories_from_data`` hook asks unless replaced (tests answer the hooks)."""
    return ask_yes_no(parent, "Publish the category list?", question)


class WheelGuard(QObject):
    """Combo and spin boxes in a scrolling form take the wheel only once focused (clicked or tabbed to):
    unfocused, the wheel scrolls the form (the nearest scroll area) instead of changing the value under the
    pointer."""

    def guard(self, widget: QWidget) -> None:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # (the default WheelFocus takes focus by the wheel)
        widget.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() != QEvent.Type.Wheel or not isinstance(obj, QWidget) or obj.hasFocus():
            return super().eventFilter(obj, event)
        area = obj.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is None:
            event.ignore()  # (Qt offers an ignored real wheel event to the parents)
            return True
        # Handed to the scroll area's bar directly: Qt does not pass a synthetic wheel event on to parents.
        assert isinstance(event, QWheelEvent)
        bar = area.verticalScrollBar()
        pos = QPointF(bar.rect().center())
        QApplication.sendEvent(bar, QWheelEvent(pos, QPointF(bar.mapToGlobal(bar.rect().center())),
                                                event.pixelDelta(), event.angleDelta(), event.buttons(),
                                                event.modifiers(), event.phase(), event.inverted()))
        event.accept()
        return True


def busy_call(parent: QWidget, title: str, text: str, fn: Callable[[], T]) -> tuple[bool, T | None]:
    """``fn()`` on a worker thread while a window-modal busy dialog (``text``, Cancel) keeps the window painting
    and its menus shut: (True, the result), or (False, None) when the person cancelled (the worker's result
    is then dropped). An exception of ``fn`` is raised here. For a step the person waits on anyway (reading a
    file before its import dialog), which frozen on the GUI thread left a window that did not repaint."""
    box: dict[str, tuple[bool, object]] = {}
    loop = QEventLoop()

    def job(should_cancel=None) -> tuple[bool, object]:
        try:
            return True, fn()
        except Exception as e:  # noqa: BLE001 - raised again on the GUI thread, whatever it is
            return False, e

    def finished(_generation: int, value: tuple[bool, object]) -> None:
        box["value"] = value
        loop.quit()

    runner = LatestOnlyRunner("busy-call", parent)
    runner.finished.connect(finished)
    dlg = QProgressDialog(text, "Cancel", 0, 0, parent)
    dlg.setObjectName("busyDialog")
    dlg.setWindowTitle(title)
    dlg.setWindowModality(Qt.WindowModality.WindowModal)
    dlg.setMinimumDuration(0)
    dlg.canceled.connect(loop.quit)
    runner.submit(job)
    dlg.show()
    loop.exec()
    dlg.canceled.disconnect(loop.quit)
    runner.finished.disconnect(finished)
    dlg.close()
    dlg.deleteLater()
    runner.shutdown(timeout=0)  # (a cancelled job ends on its own; its thread is a daemon)
    if "value" not in box:
        return False, None
    ok, value = box["value"]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return True, value  # type: ignore[return-value]
