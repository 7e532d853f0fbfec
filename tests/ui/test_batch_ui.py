"""Many persons in the app (issue 16): the import dialog's id column, switching person, Export all persons….

The tables are made here (5 persons × 200 hourly rows, shuffled). The runs share one in-process
``distributed.LocalCluster`` (1 worker thread, in-process transport, no dashboard) passed as ``client``: starting worker
processes per test would cost seconds each.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import inspect_table, load_series, person_ids, scan_table
from lmdk_gui.ui.dialogs.import_dialog import ImportDialog
from lmdk_gui.ui.window.main_window import MainWindow

distributed = pytest.importorskip("distributed")

IDS = ["h000", "h001", "h002", "h003", "h004"]


@pytest.fixture(scope="module")
def long_csv(tmp_path_factory) -> Path:
    rng = np.random.default_rng(16)
    parts = []
    for k, pid in enumerate(IDS):
        t = pd.date_range("2024-01-01", periods=200, freq="h").strftime("%Y-%m-%dT%H:%M:%S")
        parts.append(pd.DataFrame({"household": pid, "timestamp": t,
                                   "kwh": np.round(rng.gamma(2, 1.0, 200) + k, 3)}))
    df = pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=1)
    path = tmp_path_factory.mktemp("long") / "meters.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def client():
    # in-process: the scheduler and worker talk over inproc://; the scheduler's HTTP server (always started)
    # listens on loopback only, on a free port
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                       dashboard_address="127.0.0.1:0", worker_dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _frame(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"household": str})


# ------------------------------------------------------------------------------------------ core loader
def test_loader_reads_one_person_and_names_file_rows(long_csv, tmp_path):
    df = _frame(long_csv)
    s = load_series(long_csv, id_col="household", person_id="h003")
    mine = df[df["household"] == "h003"].sort_values("timestamp")
    assert s.n == 200 and s.source.columns.id_col == "household" and s.source.columns.person_id == "h003"
    np.testing.assert_allclose(s.values, mine["kwh"].to_numpy())
    # a bad value of that person is reported at its line in the file; other persons' bad rows do not matter
    bad = df.copy()
    other = int(np.flatnonzero(bad["household"].to_numpy() == "h001")[0])
    mine_pos = int(np.flatnonzero(bad["household"].to_numpy() == "h003")[5])
    bad["kwh"] = bad["kwh"].astype(object)
    bad.iloc[other, 2] = "oops"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    assert load_series(tmp_path / "bad.csv", id_col="household", person_id="h003", kind="numeric").n == 200
    bad.iloc[mine_pos, 2] = "n/a?"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(Exception, match=rf"row {mine_pos + 2}\b.*'kwh'"):
        load_series(tmp_path / "bad.csv", id_col="household", person_id="h003", kind="numeric")
    with pytest.raises(Exception, match="no rows of person 'zz'"):
        load_series(long_csv, id_col="household", person_id="zz")


def test_parquet_with_number_ids(tmp_path):
    pytest.importorskip("pyarrow")
    df = pd.DataFrame({"meter_id": np.repeat([3, 17], 50), "kwh": np.arange(100.0),
                       "timestamp": np.tile(pd.date_range("2024-01-01", periods=50, freq="h"), 2)})
    df.to_parquet(tmp_path / "m.parquet")
    assert inspect_table(tmp_path / "m.parquet").guess.id_col == "meter_id"
    assert person_ids(tmp_path / "m.parquet", "meter_id") == (("17", 50), ("3", 50))
    s = load_series(tmp_path / "m.parquet", id_col="meter_id", person_id=17)
    np.testing.assert_array_equal(s.values, np.arange(50.0, 100.0))


def test_a_project_reopens_the_same_person(long_csv, tmp_path):
    from lmdk_gui.core.data.project import Project, load_project, save_project
    from lmdk_gui.core.kernel.settings import PrivacySettings

    s = load_series(long_csv, id_col="household", person_id="h001")
    save_project(tmp_path / "p.lmdk.json", Project.from_series(s, [1, 2], PrivacySettings(epsilon=0.5)))
    opts = load_project(tmp_path / "p.lmdk.json").load_options()
    assert (opts["id_col"], opts["person_id"]) == ("household", "h001")
    again = load_series(long_csv, **opts)
    assert again.n == s.n and np.array_equal(again.values, s.values)


def test_id_column_is_suggested_and_scanned(long_csv, tmp_path):
    preview = inspect_table(long_csv)
    assert preview.guess.id_col == "household" and preview.guess.value_col == "kwh" and not preview.problems
    scan = scan_table(long_csv, id_col="household")
    assert scan.id_counts == tuple((pid, 200) for pid in IDS) and scan.person_id == "h000" and scan.error is None
    assert person_ids(long_csv, "household") == scan.id_counts
    # a row number column named "id" holds no repeats: no suggestion
    one = _frame(long_csv)[lambda d: d["household"] == "h000"].drop(columns="household")
    one.insert(0, "id", range(len(one)))
    one.to_csv(tmp_path / "one.csv", index=False)
    assert inspect_table(tmp_path / "one.csv").guess.id_col is None


# ---------------------------------------------------------------------------------------- import dialog
def _import_person(qtbot, win: MainWindow, path: Path, pid: str) -> None:
    def ask(dlg: ImportDialog) -> bool:
        qtbot.waitUntil(lambda: dlg.scan is not None and dlg.id_person.count() == len(IDS), timeout=20_000)
        assert dlg.id_col.currentText() == "household"
        assert dlg.id_person.itemText(0) == "h000 — 200 rows"
        dlg.id_person.select(pid)
        with qtbot.waitSignal(dlg.loaded, timeout=20_000):
            dlg.load()
        return True

    win.ask_import = ask
    assert win.import_with_dialog(str(path))


@pytest.fixture
def win(qtbot, long_csv):
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    _import_person(qtbot, w, long_csv, "h002")
    yield w
    w.close()


def test_import_picks_one_person(win, long_csv):
    s = win.session.series
    df = _frame(long_csv)
    assert s.n == 200 and s.source.columns.person_id == "h002"
    assert np.allclose(np.sort(s.values), np.sort(df.loc[df["household"] == "h002", "kwh"].to_numpy()))


def test_opening_a_long_table_asks_for_the_person(qtbot, tmp_path):
    """Even when its rows would load as one series (no repeated times), the persons are not mixed."""
    t = pd.date_range("2024-01-01", periods=40, freq="h").strftime("%Y-%m-%dT%H:%M:%S")
    pd.DataFrame({"participant": ["a"] * 20 + ["b"] * 20, "timestamp": t, "kwh": np.arange(40.0)}).to_csv(
        tmp_path / "two.csv", index=False)
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    shown = []
    w.ask_import = lambda dlg: shown.append(dlg.options()) or False
    assert not w.open_path(tmp_path / "two.csv")
    assert shown and shown[0]["id_col"] == "participant" and w.session.series is None


def test_switch_person_keeps_settings_and_clears_landmarks(qtbot, win, long_csv):
    ui = win.extensions["batch_ui"]
    qtbot.waitUntil(lambda: ui.chooser.count() == len(IDS), timeout=20_000)
    assert ui.person_box.isVisible() and ui.chooser.current_id() == "h002"
    win.session.set_epsilon(0.37)
    win.session.set_landmarks([3, 7, 11])
    for guard in list(win.replace_guards):  # unsaved landmarks: the project guard would ask; answer "discard"
        win.replace_guards.remove(guard)
    with qtbot.waitSignal(ui.personSwitched, timeout=20_000):
        ui.chooser.select("h004")  # what picking in the chooser does
    s = win.session.series
    df = _frame(long_csv)
    assert s.source.columns.person_id == "h004" and s.n == 200
    assert np.allclose(np.sort(s.values), np.sort(df.loc[df["household"] == "h004", "kwh"].to_numpy()))
    assert win.session.settings.epsilon == pytest.approx(0.37)
    assert win.session.landmarks.size == 0
    assert "h004" in ui.last_note and "h002's 3 landmarks were cleared" in ui.last_note


# ------------------------------------------------------------------------------------------- export all
def test_export_all_dialog_runs_to_the_summary(qtbot, win, client, tmp_path, monkeypatch):
    ui = win.extensions["batch_ui"]
    win.session.set_epsilon(0.8)
    out = tmp_path / "release"
    summaries = []
    ui.show_summary = summaries.append

    def ask(dlg) -> bool:
        dlg.folder.setText(str(out))
        dlg.source.setCurrentIndex(dlg.source.findData("file"))
        assert dlg.rule_warning.isHidden()  # nothing found from the values
        dlg.source.setCurrentIndex(dlg.source.findData("rule:threshold"))
        assert not dlg.rule_warning.isHidden() and "tell anyone which events passed it" in dlg.rule_warning.text()
        dlg.param_fields["below"][1].setText("")
        dlg.try_accept()  # the threshold rule needs a bound: said in the dialog, which stays open
        assert dlg.result() == 0 and "below, above or both" in dlg.error.text()
        dlg.param_fields["above"][1].setText("5")
        dlg.try_accept()
        return dlg.result() == dlg.DialogCode.Accepted

    ui.ask_export_all = ask
    # the dialog's run, with the test's cluster instead of local worker processes
    real = ui.export_all
    monkeypatch.setattr(ui, "export_all", lambda outdir, **kw: real(outdir, client=client, **kw))
    with qtbot.waitSignal(ui.batchFinished, timeout=120_000):
        win.extensions["batch_ui"].action.trigger()
        assert ui.progress_dialog is not None and ui.progress_dialog.isVisible()
    (summary,) = summaries
    assert (summary.persons, summary.released, summary.failed) == (5, 5, 0)
    assert sorted(p.name for p in out.glob("*.csv")) == [f"{pid}.csv" for pid in IDS]
    manifest = json.loads((out / "manifest.json").read_text())
    assert '"epsilon": 0.8' in json.dumps(manifest["settings"])  # the session's ε, not a default
    data = _frame(Path(win.session.series.source.path))
    for rec in manifest["persons"]:  # the rule ran on each person: landmarks = their hours above 5 kWh
        assert rec["landmarks"] == int((data.loc[data["household"] == rec["id"], "kwh"] > 5).sum())
        statement = json.loads((out / rec["sidecar"]).read_text())["statement"]
        assert "the landmarks were found by a rule on these values (Value threshold)" in statement
    assert ui.progress_dialog is None and ui.action.isEnabled()
    # the summary box says it, with Open folder
    from lmdk_gui.ui.dialogs.batch_ui import summary_box

    opened = []
    box = summary_box(summary, win, opened.append)
    qtbot.addWidget(box)
    assert "5 of 5" in box.text() and str(out) in box.text()
    box.findChild(object, "exportAllOpenFolder").click()
    assert opened == [out]


def test_cancel_leaves_complete_persons_only(qtbot, win, client, tmp_path):
    ui = win.extensions["batch_ui"]
    out = tmp_path / "cancelled"
    job = ui.export_all(out, scheme="uniform", client=client)
    job.cancel()  # before any person: the run stops at its first check
    with qtbot.waitSignal(job.cancelled, timeout=120_000):
        pass
    assert not (out / "manifest.json").exists()
    leftovers = [p for p in out.rglob("*") if p.is_file() and ".lmdk-batch" not in p.parts]
    for p in leftovers:  # only complete persons (a file with its sidecar), never a temporary file
        assert p.suffix in (".csv", ".json") and not p.name.startswith(".")
    assert "Resume" in win.statusBar().currentMessage()
    # Resume finishes it
    with qtbot.waitSignal(ui.batchFinished, timeout=120_000) as sig:
        ui.show_summary = lambda s: None
        ui.export_all(out, scheme="uniform", client=client, resume=True)
    assert sig.args[0].released == 5 and (out / "manifest.json").exists()
    # the dialog says before starting what the run would refuse, in the dialog's words
    from lmdk_gui.ui.dialogs.batch_ui import ExportAllDialog

    dlg = ExportAllDialog(win.session.series, win.session.settings, None, str(out), 5, win)
    qtbot.addWidget(dlg)
    dlg.source.setCurrentIndex(dlg.source.findData("none"))
    assert "holds a batch run; tick Resume to finish it" in dlg.check()
    dlg.resume.setChecked(True)
    assert dlg.check() is None
    dlg.source.setCurrentIndex(dlg.source.findData("file"))
    assert dlg.check() == "choose the landmark file"
    (tmp_path / "lm.csv").write_text("household,row\nh001,3\n")
    dlg.file.setText(str(tmp_path / "lm.csv"))
    assert dlg.check() is None and dlg.values()["landmarks_file"] == str(tmp_path / "lm.csv")


def test_close_while_running_asks(qtbot, win, client, tmp_path):
    ui = win.extensions["batch_ui"]
    asked = []
    ui.confirm_cancel_batch = lambda: asked.append(1) or False
    job = ui.export_all(tmp_path / "r", scheme="uniform", client=client)
    win.close()
    assert asked == [1] and win.isVisible() and job.is_running()
    ui.confirm_cancel_batch = lambda: True
    win.close()
    assert not win.isVisible() and not job.is_running()
    assert not (tmp_path / "r" / "manifest.json").exists()


# ------------------------------------------------------------------- categorical tables: one list for all
@pytest.fixture(scope="module")
def places_csv(tmp_path_factory) -> Path:
    """The same five persons with places; only h001 was ever at 'clinic' (one event)."""
    rng = np.random.default_rng(3)
    parts = []
    for pid in IDS:
        t = pd.date_range("2024-01-01", periods=200, freq="h").strftime("%Y-%m-%dT%H:%M:%S")
        place = rng.choice(["home", "work", "gym"] if pid != "h004" else ["home", "work"], 200).astype(object)
        if pid == "h001":
            place[50] = "clinic"
        parts.append(pd.DataFrame({"household": pid, "timestamp": t, "place": place}))
    path = tmp_path_factory.mktemp("places") / "places.csv"
    pd.concat(parts, ignore_index=True).to_csv(path, index=False)
    return path


def test_export_all_asks_before_publishing_the_tables_category_list(qtbot, client, places_csv, tmp_path,
                                                                    monkeypatch):
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.show()
    _import_person(qtbot, w, places_csv, "h004")
    assert w.session.series.kind == "categorical" and w.session.settings.categories is None
    ui = w.extensions["batch_ui"]
    ui.show_summary = lambda s: None
    answers, asked, started = [False, True], [], []

    def answer(message: str) -> bool:
        asked.append(message)
        return answers.pop(0)

    ui.ask_categories_from_data = answer

    def ask(dlg) -> bool:
        dlg.folder.setText(str(tmp_path / "out"))
        dlg.source.setCurrentIndex(dlg.source.findData("none"))
        assert dlg.map_unlisted.isHidden()  # no public list: nothing to map
        dlg.try_accept()  # "No": the dialog stays open and says what to give
        assert dlg.result() == 0 and "public category list" in dlg.error.text()
        dlg.try_accept()  # "Yes"
        return dlg.result() == dlg.DialogCode.Accepted

    ui.ask_export_all = ask
    real = ui.export_all

    def export_all(outdir, **kw):
        started.append(kw)
        return real(outdir, client=client, **kw)

    monkeypatch.setattr(ui, "export_all", export_all)
    with qtbot.waitSignal(ui.batchFinished, timeout=120_000) as sig:
        ui.action.trigger()
    assert len(asked) == 2 and "union of all persons' labels" in asked[0]
    assert started[0]["categories_from_data"] is True and ui.job.options.categories_from_data is True
    assert sig.args[0].released == 5
    lists = {p.name: json.loads(p.read_text()) for p in (tmp_path / "out").glob("*.csv.json")}
    assert len(lists) == 5
    for doc in lists.values():  # h004 never went to the gym nor the clinic: the same list all the same
        assert doc["categories"] == ["clinic", "gym", "home", "work"] and doc["categories_from_data"] is True
    # the automation API without the answer: refused in one line, nothing released
    failed = []
    job = real(tmp_path / "refused", scheme="uniform", client=client)
    job.failed.connect(failed.append)
    qtbot.waitUntil(lambda: bool(failed), timeout=120_000)
    assert "answer Yes to publishing the data's list" in failed[0]
    assert not list((tmp_path / "refused").glob("*.csv"))
    w.close()


def test_export_all_offers_to_map_labels_missing_from_the_public_list(qtbot, places_csv, tmp_path):
    from lmdk_gui.ui.dialogs.batch_ui import ExportAllDialog

    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.show()
    _import_person(qtbot, w, places_csv, "h000")
    w.session.set_settings(w.session.settings.with_(categories=("home", "work", "gym")))
    asked = []
    dlg = ExportAllDialog(w.session.series, w.session.settings, None, str(tmp_path / "o"), 5, w,
                          ask_categories_from_data=lambda m: asked.append(m) or True)
    qtbot.addWidget(dlg)
    dlg.source.setCurrentIndex(dlg.source.findData("none"))
    assert not dlg.map_unlisted.isHidden() and dlg.values()["map_unlisted_to"] is None
    dlg.map_unlisted.setChecked(True)
    assert dlg.check() is None
    dlg.try_accept()
    assert asked == []  # a public list: no question
    v = dlg.values()
    assert v["map_unlisted_to"] == "other" and v["categories_from_data"] is False
    from lmdk_gui.ui.dialogs.batch_ui import batch_options

    v.pop("outdir")
    opts = batch_options(w.session.series, w.session.settings, None, **v)
    assert opts.map_unlisted_to == "other" and opts.settings.categories == ("home", "work", "gym")
    w.close()


def test_export_all_refuses_bounds_taken_from_this_persons_values(qtbot, win, client, tmp_path):
    """"From data" took this person's minimum and maximum: Export all persons… would publish them in every
    person's release. The dialog says what to do instead and stays open; the automation API is refused too."""
    win.settings_panel.bounds_from_data.click()
    st = win.session.settings
    assert st.bounds_from_data and st.bounds == (float(win.session.series.values.min()),
                                                 float(win.session.series.values.max()))
    ui = win.extensions["batch_ui"]
    ran = []

    def ask(dlg) -> bool:
        dlg.folder.setText(str(tmp_path / "out"))
        dlg.source.setCurrentIndex(dlg.source.findData("none"))
        dlg.try_accept()
        ran.append(dlg.error.text())
        assert dlg.result() == 0 and not dlg.error.isHidden()
        return False

    ui.ask_export_all = ask
    ui.action.trigger()
    assert ran and "one person's values" in ran[0] and "type public bounds in the settings" in ran[0]
    failed = []
    job = ui.export_all(tmp_path / "api", scheme="uniform", client=client)
    job.failed.connect(failed.append)
    qtbot.waitUntil(lambda: bool(failed), timeout=120_000)
    assert "one person's values" in failed[0]
    assert not (tmp_path / "out").exists() and not list((tmp_path / "api").glob("*.csv"))
