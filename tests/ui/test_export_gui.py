"""Export from the window (issue 4): the background job, cancel, failures, the dialog, closing mid-export."""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from lmdk_gui.core.kernel.guarantee import check_guarantee
from lmdk_gui.core.publish import export as export_mod
from lmdk_gui.ui.dialogs.export_dialog import ExportDialog
from tests.keys import test_key

from .conftest import wait_preview


def test_finished_export_has_columns_rows_and_sidecar(qtbot, window, tmp_path):
    s = window.session
    s.add_range(100, 180)
    out = tmp_path / "release.csv"
    job = window.export_release(out, "adaptive", include_budget=True)
    with qtbot.waitSignal(job.finished, timeout=30_000) as blocker:
        pass
    assert blocker.args == [str(out)]
    df = pd.read_csv(out)
    assert list(df.columns) == ["timestamp", "kwh", "epsilon"]
    assert len(df) == s.n
    assert check_guarantee(df["epsilon"].to_numpy(), np.arange(100, 181), s.epsilon).holds
    side = json.loads((tmp_path / "release.csv.json").read_text())
    assert side["guarantee_holds"] is True and side["scheme"] == "adaptive"
    assert not window.export_progress.isVisible()


def test_snapshot_isolates_edits_made_during_export(qtbot, window, tmp_path):
    s = window.session
    s.add_range(0, 9)
    job = window.export_release(tmp_path / "r.csv", "uniform", include_budget=True)
    s.add_range(300, 400)  # after the job started: must not change what is written
    s.set_epsilon(5.0)
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    eps = pd.read_csv(tmp_path / "r.csv")["epsilon"].to_numpy()
    assert np.allclose(eps, eps[0]) and eps[0] == pytest.approx(1.0 / 11, rel=1e-9)


def test_progress_and_cancel_leave_nothing(qtbot, window, tmp_path, monkeypatch):
    out = tmp_path / "r.csv"
    real = export_mod._ChunkWriter.write
    progress = []

    def write_then_cancel(self, *a, **k):  # cancel as soon as the first chunk is written
        real(self, *a, **k)
        window.export_job.cancel()

    monkeypatch.setattr(export_mod._ChunkWriter, "write", write_then_cancel)
    job = window.export_release(out, "uniform")
    job.progress.connect(lambda d, t: progress.append((d, t)))
    with qtbot.waitSignal(job.cancelled, timeout=30_000):
        pass
    assert list(tmp_path.iterdir()) == []
    assert "cancelled" in window.statusBar().currentMessage()
    assert progress and progress[0][1] == window.session.n


def test_injected_disk_full_reports_and_leaves_nothing(qtbot, window, tmp_path, monkeypatch):
    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(export_mod._ChunkWriter, "write", full)
    job = window.export_release(tmp_path / "r.csv", "skip")
    with qtbot.waitSignal(job.failed, timeout=30_000) as blocker:
        pass
    assert "disk is full" in blocker.args[0]
    assert "disk is full" in window.last_error
    assert list(tmp_path.iterdir()) == []
    window._error_box.close()


def test_failing_baseline_is_refused(qtbot, window, tmp_path):
    window.session.toggle_landmark(3)
    job = window.export_release(tmp_path / "e.csv", "event")
    with qtbot.waitSignal(job.failed, timeout=30_000) as blocker:
        pass
    assert "landmark-privacy check" in blocker.args[0]
    assert list(tmp_path.iterdir()) == []
    window._error_box.close()


def test_dialog_disables_failing_baselines_and_summarises(qtbot, window, tmp_path):
    window.session.add_range(5, 9)
    wait_preview(qtbot, window)
    dlg = ExportDialog(window.session.snapshot(), "skip", str(tmp_path), window)
    qtbot.addWidget(dlg)
    model = dlg.scheme.model()
    enabled = {dlg.scheme.itemData(i): model.item(i).isEnabled() for i in range(dlg.scheme.count())}
    assert enabled == {"uniform": True, "skip": True, "adaptive": True, "balanced": True, "event": False,
                       "user": True}  # issue 12 added Balanced
    assert dlg.scheme.currentData() == "skip"
    text = dlg.summary.text()
    assert "Skip" in text and "5 landmark" in text and "ε = 1" in text
    assert not dlg.columns_warning.isVisible()
    dlg.include_flags.setChecked(True)
    assert not dlg.columns_warning.isHidden()
    dlg.use_seed.setChecked(True)
    assert not dlg.seed_warning.isHidden()
    v = dlg.values()
    # issue 17, finding 2: a reproducible export gets a generated secret key, never a small seed
    assert v["scheme"] == "skip" and v["include_flags"] and v["seed"] == dlg.seed.text()
    assert len(v["seed"]) >= 32 and export_mod.export_key(v["seed"]) is not None
    assert v["path"].endswith("energy_hue_2013_jan_protected.csv")


def test_close_during_export_asks_and_cancels(qtbot, window, tmp_path, monkeypatch):
    import threading

    gate = threading.Event()
    real = export_mod._ChunkWriter.write

    def held(self, *a, **k):
        gate.wait(10)
        return real(self, *a, **k)

    monkeypatch.setattr(export_mod._ChunkWriter, "write", held)
    out = tmp_path / "r.csv"
    job = window.export_release(out, "uniform")
    asked = []
    window.confirm_cancel_export = lambda: asked.append(1) or False
    window.close()
    assert asked and window.isVisible()  # refused: keeps running
    window.confirm_cancel_export = lambda: asked.append(2) or True
    gate.set()
    window.close()
    assert not job.is_running()
    assert not out.exists() or job.state == "finished"
    assert [p for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_dialog_and_window_export_follow_the_denoise_setting(qtbot, window, tmp_path):
    """The dialog's checkbox starts from the session's setting and goes into values(); the window's export
    writes the denoised release (sidecar post_processing) or, off, the raw one with the same budgets."""
    s = window.session
    s.add_range(100, 180)
    wait_preview(qtbot, window)
    dlg = ExportDialog(s.snapshot(), "skip", str(tmp_path), window)
    qtbot.addWidget(dlg)
    assert dlg.denoise.isChecked() and dlg.values()["denoise"] is True
    dlg.denoise.setChecked(False)
    assert dlg.values()["denoise"] is False
    sides = {}
    for on in (True, False):
        out = tmp_path / f"{on}.csv"
        job = window.export_release(out, "skip", include_budget=True, seed=test_key(4), denoise=on)
        with qtbot.waitSignal(job.finished, timeout=30_000):
            pass
        qtbot.waitUntil(lambda j=job: not j.is_running(), timeout=10_000)
        sides[on] = (json.loads((tmp_path / f"{on}.csv.json").read_text()), pd.read_csv(out))
    (sd, dd), (sr, dr) = sides[True], sides[False]
    assert sd["post_processing"]["method"].endswith("rts-local-level") and sr["post_processing"] is None
    assert sd["guarantee_holds"] is sr["guarantee_holds"] is True and sd["landmark_sum"] == sr["landmark_sum"]
    np.testing.assert_array_equal(dd["epsilon"], dr["epsilon"])
    assert not np.array_equal(dd["kwh"], dr["kwh"])
    s.set_denoise(False)
    wait_preview(qtbot, window)
    assert ExportDialog(s.snapshot(), "skip", str(tmp_path), window).denoise.isChecked() is False


# --------------------------------------------------------------------------------------- issue 17
def test_reproducible_export_shows_a_copyable_key_that_recreates_the_release(qtbot, window, tmp_path):
    from PySide6.QtWidgets import QApplication

    from lmdk_gui.core.publish import ledger
    from lmdk_gui.core.publish.reexport import reexport

    window.session.add_range(10, 30)
    dlg = ExportDialog(window.session.snapshot(), "adaptive", str(tmp_path), window)
    qtbot.addWidget(dlg)
    assert dlg.seed.text() == "" and not dlg.copy_key.isEnabled()
    dlg.use_seed.setChecked(True)
    key = dlg.seed.text()
    assert len(key) == 64 and dlg.seed.isReadOnly()
    dlg.copy_key.click()
    assert QApplication.clipboard().text() == key
    dlg.use_seed.setChecked(False)
    assert dlg.values()["seed"] is None
    out = tmp_path / "r.csv"
    job = window.export_release(out, "adaptive", seed=key)
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    side = (tmp_path / "r.csv.json").read_text()
    assert json.loads(side)["seeded"] is True and key not in side
    entry = ledger.entries()[-1]
    assert entry["key"] == key and entry["output"] == str(out)
    again = tmp_path / "again.csv"
    reexport(entry["id"], again)
    assert again.read_text() == out.read_text()


def test_skip_and_adaptive_warn_next_to_the_scheme(qtbot, window, tmp_path):
    window.session.add_range(10, 12)
    dlg = ExportDialog(window.session.snapshot(), "uniform", str(tmp_path), window)
    qtbot.addWidget(dlg)
    assert dlg.republish_warning.isHidden()
    for scheme in ("skip", "adaptive"):
        dlg.scheme.setCurrentIndex(dlg.scheme.findData(scheme))
        assert not dlg.republish_warning.isHidden() and "dummy landmarks" in dlg.republish_warning.text()
    assert not dlg.verbatim_labels.isEnabled()  # numeric: no text cells to neutralise


def test_a_second_release_of_the_same_input_asks_first(qtbot, window, tmp_path):
    window.session.add_range(10, 12)
    job = window.export_release(tmp_path / "a.csv", "uniform")
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    dlg = ExportDialog(window.session.snapshot(), "uniform", str(tmp_path), window)
    qtbot.addWidget(dlg)
    dlg.path_edit.setText(str(tmp_path / "b.csv"))
    asked = []
    dlg.ask_repeat_release = lambda notice: asked.append(notice) or False
    dlg._accept()
    assert asked and "released 1 time before" in asked[0] and "faces ε = 2" in asked[0]
    assert dlg.result() != ExportDialog.DialogCode.Accepted
    dlg.ask_repeat_release = lambda notice: True
    dlg._accept()
    assert dlg.result() == ExportDialog.DialogCode.Accepted


def _advised_dialog(qtbot, window, tmp_path, default="adaptive"):
    s = window.session
    qtbot.waitUntil(lambda: s.is_preview_current() and s.average is not None, timeout=60_000)
    dlg = ExportDialog(s.snapshot(), default, str(tmp_path), window, average=s.average, preview=s.preview)
    qtbot.addWidget(dlg)
    return dlg


def test_dialog_preselects_the_passing_scheme_with_the_lowest_expected_error(qtbot, window, tmp_path):
    s = window.session
    s.set_denoise(False)  # the raw release: its MAE ranks (denoised: test below)
    s.set_epsilon(5.0)  # (at ε = 1 no scheme beats the median: see the test of an uninformative release)
    s.add_range(100, 180)
    dlg = _advised_dialog(qtbot, window, tmp_path)
    passing = {k: v.mean for k, v in s.average.items() if k != "event"}  # Event-level fails with landmarks
    assert s.average["event"].mean < s.average["uniform"].mean  # lower, but refused: never advised
    assert dlg.scheme.currentData() == min(passing, key=passing.get) == "skip"
    t = dlg.advice_table
    row = {t.item(r, 0).text(): r for r in range(t.rowCount())}
    assert t.item(row["Skip"], 3).text() == "★ lowest error"
    assert t.item(row["Event-level (baseline)"], 3).text() == "✘ fails the check"
    mean, band = t.item(row["Skip"], 1).text().split(" (")
    assert float(mean) == pytest.approx(s.average["skip"].mean, rel=5e-3)
    lo, hi = (float(x) for x in band.rstrip(")").split("–"))
    assert lo == pytest.approx(s.average["skip"].p10, rel=5e-2) and hi == pytest.approx(s.average["skip"].p90, rel=5e-2)
    assert t.item(row["Uniform"], 3).text() == "not informative"  # ≈ 16 kWh against the median's 0.573
    assert t.item(t.rowCount() - 1, 0).text() == "One constant (median)"
    assert float(t.item(t.rowCount() - 1, 1).text()) == pytest.approx(0.573, abs=1e-3)
    share = float(np.mean(s.preview["skip"].approximated))
    assert t.item(row["Skip"], 2).text() == f"{100 * share:.0f} %"
    assert dlg.noise_warning.isHidden()
    # a click on a failing row does nothing; on a passing one it chooses the scheme
    qtbot.mouseClick(t.viewport(), Qt.MouseButton.LeftButton, pos=t.visualItemRect(t.item(row["Event-level (baseline)"], 0)).center())
    assert dlg.scheme.currentData() == "skip"
    qtbot.mouseClick(t.viewport(), Qt.MouseButton.LeftButton, pos=t.visualItemRect(t.item(row["Adaptive"], 0)).center())
    assert dlg.scheme.currentData() == "adaptive"
    dlg.set_advice(s.average, s.preview)  # a late average does not override the user's choice
    assert dlg.scheme.currentData() == "adaptive"


def test_dialog_warns_but_does_not_block_a_release_no_better_than_a_constant(qtbot, window, tmp_path):
    s = window.session
    s.set_denoise(False)  # the raw release: its MAE ranks (denoised: test below)
    s.set_epsilon(5.0)
    s.add_range(100, 180)
    dlg = _advised_dialog(qtbot, window, tmp_path)
    dlg.scheme.setCurrentIndex(dlg.scheme.findData("uniform"))  # ≈ 16 kWh of error on 0.1–4.7 kWh data
    text = dlg.noise_warning.text()
    assert not dlg.noise_warning.isHidden()
    assert "no better than publishing a constant: expected error" in text and "vs 0.573 kWh" in text
    assert dlg.export_button.isEnabled()
    assert dlg.values()["scheme"] == "uniform"


def test_dialog_without_an_average_yet_fills_in_later(qtbot, window, tmp_path):
    s = window.session
    s.add_range(100, 180)
    qtbot.waitUntil(lambda: s.is_preview_current() and s.average is not None, timeout=60_000)
    dlg = ExportDialog(s.snapshot(), "adaptive", str(tmp_path), window)
    qtbot.addWidget(dlg)
    assert dlg.scheme.currentData() == "adaptive"
    assert dlg.advice_table.item(0, 1).text() == "computing…"
    assert dlg.none_informative.isHidden()  # not said before the errors are known
    dlg.set_advice(s.average, s.preview)
    assert dlg.scheme.currentData() is None  # at ε = 1 nothing beats the median: nothing pre-selected


def test_no_informative_scheme_preselects_nothing_and_says_so(qtbot, window, tmp_path):
    """The energy sample at ε = 1 with 81 landmarks: every passing scheme's expected error (denoised, ≈ 0.59
    kWh and up) is above 0.9 × the median's 0.573 kWh. Nothing is advised nor pre-selected, the dialog says
    why, and Export waits for a choice, which is then honoured with the warning."""
    s = window.session
    s.add_range(100, 180)
    dlg = _advised_dialog(qtbot, window, tmp_path)
    assert dlg.best is None and dlg.scheme.currentIndex() == -1 and dlg.scheme.currentData() is None
    assert not dlg.none_informative.isHidden()
    text = dlg.none_informative.text()
    assert "no better than publishing one constant" in text and "larger ε, a smaller Δ" in text
    assert "0.573 kWh" in text
    assert not dlg.export_button.isEnabled()
    t = dlg.advice_table
    assert "★ lowest error" not in [t.item(r, 3).text() for r in range(t.rowCount())]
    dlg.scheme.setCurrentIndex(dlg.scheme.findData("skip"))
    assert dlg.export_button.isEnabled() and "no better than publishing a constant" in dlg.noise_warning.text()


def _overlaps(dlg) -> list[str]:
    """The shown fields of the dialog's form that start above the end of the one before them."""
    from PySide6.QtWidgets import QFormLayout

    form = dlg._body.layout()
    shown = [it.widget() for r in range(form.rowCount())
             if (it := form.itemAt(r, QFormLayout.ItemRole.FieldRole)) is not None and it.widget() is not None
             and it.widget().isVisible()]
    return [f"{type(b).__name__} at {b.y()} over {type(a).__name__} ending at {a.geometry().bottom()}"
            for a, b in zip(shown, shown[1:], strict=False) if b.y() <= a.geometry().bottom()]


def test_dialog_is_tall_enough_for_its_notes(qtbot, window, tmp_path):
    """Shown at its minimum height (640×556) the wrapped notes were drawn over the advice table (they needed
    710): the dialog grows to the height its contents need at its width, also when a note appears later."""
    s = window.session
    s.add_range(100, 140)
    qtbot.waitUntil(lambda: s.average is not None and s.is_preview_current(), timeout=60_000)
    dlg = ExportDialog(s.snapshot(), "skip", str(tmp_path), window, average=s.average, preview=s.preview)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    qtbot.waitUntil(lambda: not _overlaps(dlg))
    assert dlg.advice_caption.y() > dlg.advice_table.geometry().bottom()
    dlg.use_seed.setChecked(True)  # the key's warning appears
    room = dlg.screen().availableGeometry().height() - 40

    def fitted() -> bool:  # the choices shown whole, or the dialog as tall as the screen allows (they scroll)
        body = dlg._body.layout().totalHeightForWidth(dlg._scroll.viewport().width())
        return dlg._scroll.viewport().height() >= body or dlg.height() >= room

    qtbot.waitUntil(lambda: dlg.seed_warning.isVisible() and not _overlaps(dlg) and fitted())
    assert dlg.height() <= max(room, dlg.minimumSizeHint().height())


def test_the_dialog_never_grows_past_the_screen_its_choices_scroll(qtbot, window, tmp_path):
    """With its notes, the key's warning and a rule's warning the dialog needed ≈ 850 px: on a 1280×800 screen
    Export was below the screen's edge. The dialog stops at the screen's height; the choices scroll above the
    guarantee and the buttons, which stay in view."""
    s = window.session
    s.set_landmarks(range(100, 140), rules=frozenset({"Value threshold"}))
    qtbot.waitUntil(lambda: s.average is not None and s.is_preview_current(), timeout=60_000)
    dlg = ExportDialog(s.snapshot(), "skip", str(tmp_path), window, average=s.average, preview=s.preview,
                       landmark_rules=s.landmark_rules)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    dlg.use_seed.setChecked(True)
    dlg.include_budget.setChecked(True)  # every note at once
    room = dlg.screen().availableGeometry().height() - 40
    body = lambda: dlg._body.layout().totalHeightForWidth(dlg._scroll.viewport().width())  # noqa: E731
    qtbot.waitUntil(lambda: dlg.height() >= min(room, dlg.height() - dlg._scroll.viewport().height() + body()))
    assert body() > dlg._scroll.viewport().height() and dlg.height() <= room  # more than fits: it scrolls
    assert dlg._scroll.verticalScrollBar().maximum() > 0
    for w in (dlg.export_button, dlg.summary):  # the guarantee and Export stay inside the dialog, on screen
        assert w.isVisible() and w.geometry().bottom() <= dlg.height()
    assert dlg.frameGeometry().bottom() <= dlg.screen().availableGeometry().bottom()


def test_file_export_passes_the_sessions_average_to_the_dialog(qtbot, window, monkeypatch):
    s = window.session
    s.set_denoise(False)  # the raw release: its MAE ranks (denoised: test below)
    s.set_epsilon(5.0)
    s.add_range(100, 180)
    qtbot.waitUntil(lambda: s.is_preview_current() and s.average is not None, timeout=60_000)
    seen = []

    def fake_exec(dlg):
        seen.append((dlg.scheme.currentData(), dlg.errors))
        return ExportDialog.DialogCode.Rejected

    monkeypatch.setattr(ExportDialog, "exec", fake_exec)
    window.export_dialog()
    scheme, errors = seen[0]
    assert scheme == "skip" and errors["uniform"] == s.average["uniform"].mean


def test_with_denoise_on_the_advice_ranks_by_what_is_published(qtbot, window, tmp_path):
    """Denoise on (the default): the table shows and ranks the denoised errors (the Metrics table's MAE
    denoised average); unticking the dialog's Denoise box re-ranks by the raw error of the raw release."""
    s = window.session
    assert s.settings.denoise
    s.set_epsilon(5.0)
    s.add_range(100, 180)
    dlg = _advised_dialog(qtbot, window, tmp_path)
    assert dlg.error_field == "mae_denoised"
    assert "after denoising" in dlg.advice_table.horizontalHeaderItem(1).text()
    assert "after the same denoising as the export" in dlg.advice_caption.text()
    assert dlg.errors == {k: v.mean_denoised for k, v in s.average.items()}
    passing = {k: v.mean_denoised for k, v in s.average.items() if not dlg.reasons[k]}
    assert dlg.best == min(passing, key=passing.get)
    assert dlg.noise_warning.isHidden()
    dlg.denoise.setChecked(False)
    assert dlg.error_field == "mae"
    assert "denois" not in dlg.advice_table.horizontalHeaderItem(1).text()
    assert dlg.errors == {k: v.mean for k, v in s.average.items()}


def test_ticking_denoise_when_the_session_averaged_raw_values_computes_the_denoised_advice(qtbot, window, tmp_path):
    """Session Denoise off: its average has no denoised error. Ticking the dialog's Denoise box shows
    "computing…", then the core's average for the denoised release (the same numbers the session gives with
    Denoise on), never "—"."""
    s = window.session
    s.add_range(100, 180)
    s.set_denoise(False)
    dlg = _advised_dialog(qtbot, window, tmp_path)
    assert dlg.error_field == "mae"
    dlg.denoise.setChecked(True)
    assert dlg.error_field == "mae_denoised"
    assert dlg.errors == {} and dlg.advice_table.item(0, 1).text() == "computing…"
    qtbot.waitUntil(lambda: bool(dlg.errors), timeout=60_000)
    assert all(v == v for v in dlg.errors.values())  # no NaN: every scheme has a denoised error
    with qtbot.waitSignal(s.metricsChanged, timeout=60_000):
        s.set_denoise(True)
    assert dlg.errors == {k: v.mean_denoised for k, v in s.average.items()}
    assert "—" not in dlg.advice_table.item(len(s.average) - 1, 1).text()
    dlg.reject()


_CANCEL_THEN_QUIT = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from lmdk_gui.ui import MainWindow
from tests.conftest import SAMPLES
w = MainWindow(load_default=False)
w.show()
w.open_series(SAMPLES / "energy_hue_2013_jan.csv")
QTimer.singleShot(300, lambda: app.activeModalWidget().reject())
w.export_dialog()
w.close()
print("closed", flush=True)
"""


def test_cancelling_the_export_dialog_then_quitting_exits_cleanly(tmp_path):
    """File › Export…, Cancel, then quit: the interpreter's exit crashed in Qt's teardown (SIGSEGV or an abort,
    "shared QObject was deleted directly", 5 runs of 8) while the closed dialog was left to the window."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {**os.environ, "LMDK_GUI_SETTINGS": str(tmp_path / "s.ini"), "PYTHONPATH": str(ROOT),
           "QT_QPA_PLATFORM": "offscreen"}
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _CANCEL_THEN_QUIT], env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0 and "closed" in out.stdout, (out.returncode, out.stderr[-2000:])


def test_a_non_negative_series_is_asked_for_a_public_lower_bound_0(qtbot, window, tmp_path):
    """Issue 44: the dock asks "values cannot be negative (public): lower bound 0" for the (non-negative)
    energy sample — asked, not set; ticked, the settings carry the public lower bound 0 and the export
    dialog no longer asks; public bounds take its place."""
    from lmdk_gui.core.kernel.settings import NONNEGATIVE_QUESTION

    panel, s = window.settings_panel, window.session
    box = panel.lower_check
    assert box.objectName() == "lowerBoundCheck" and box.text() == NONNEGATIVE_QUESTION
    assert panel.mech_form.isRowVisible(box) and not box.isChecked() and s.settings.lower_bound is None
    wait_preview(qtbot, window)
    dlg = ExportDialog(s.snapshot(), "uniform", str(tmp_path), window)
    qtbot.addWidget(dlg)
    assert not dlg.lower_bound_hint.isHidden() and NONNEGATIVE_QUESTION in dlg.lower_bound_hint.text()
    box.setChecked(True)
    assert s.settings.lower_bound == 0.0 and s.settings.bounds is None and not s.settings.bounds_from_data
    dlg2 = ExportDialog(s.snapshot(), "uniform", str(tmp_path), window)
    qtbot.addWidget(dlg2)
    assert dlg2.lower_bound_hint.isHidden()
    panel.bounds_check.setChecked(True)  # both ends: the bounds say it, the question goes
    assert not panel.mech_form.isRowVisible(box) and s.settings.lower_bound is None
    assert s.settings.bounds is not None


def test_the_wheel_over_an_unfocused_combo_scrolls_the_dialog_not_the_choice(qtbot, window, tmp_path):
    """Issue 44: over the Noise combo the wheel changed the sampler while the person meant to scroll; now an
    unfocused combo passes the wheel on, and a focused one still takes it."""
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    s = window.session
    wait_preview(qtbot, window)
    dlg = ExportDialog(s.snapshot(), "uniform", str(tmp_path), window)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    dlg.resize(dlg.width(), 300)  # short: the body scrolls
    qtbot.waitUntil(lambda: dlg._scroll.verticalScrollBar().maximum() > 0)
    combo = dlg.backend
    dlg._scroll.ensureWidgetVisible(combo)
    bar = dlg._scroll.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)

    def wheel(delta: int) -> None:
        pos = QPointF(combo.rect().center())
        ev = QWheelEvent(pos, QPointF(combo.mapToGlobal(QPoint(*map(int, (pos.x(), pos.y()))))), QPoint(),
                         QPoint(0, delta), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                         Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(combo, ev)

    assert combo.count() == 2 and combo.currentIndex() == 0 and not combo.hasFocus()
    before = bar.value()
    wheel(-120)  # down
    assert combo.currentIndex() == 0 and bar.value() > before  # the dialog scrolled, the choice stayed
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus)
    wheel(-120)
    assert combo.currentIndex() == 1  # focused: the wheel is the combo's
