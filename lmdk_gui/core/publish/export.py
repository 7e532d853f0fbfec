"""Export: the one step that must never go wrong (DESIGN §5, §9; issues 2, 4 and 17).

``export_release`` writes the release of one scheme with *fresh* floating-point-safe noise
(:mod:`.securenoise`: OS entropy, or a secret export key for a reproducible export — never a small integer
seed, never a structured or low-entropy key; the key is bound to what is released, :mod:`.keys`), streaming
in chunks with a progress callback and a cancel flag, through :class:`~.writers.AtomicFile`. Order of work:

1. Pre-flight, before any noise is drawn: settings, key, scheme/backend, output paths (not a folder, neither
   the CSV nor the sidecar is the input, only regular files are replaced and only with ``force``), the input
   still has the SHA-256 it had when loaded, the landmark-sum check for schemes whose budgets are known up
   front, and ε and the values against the sampler's range (one-line errors naming ε, or the event and
   column).
2. Chunks of rows: noise for the fresh events on one public grid for the whole release (Δ and ε only, never
   ε_t), approximations republish the previous release; values are printed on the public decimal grid of
   :func:`value_decimals`; text cells are neutralised against spreadsheet formulas unless asked otherwise.
3. The independent landmark-sum check on the final budgets (Adaptive's budgets are only known now). A
   failure raises :class:`~.guarantee.GuaranteeError` and the temporary file is removed.
4. The sidecar is written to its own temporary file; the release is recorded in the private ledger
   (:mod:`.ledger`); then, holding a lock on the folder, the old sidecar (if any) is removed, the CSV is
   renamed into place, then the sidecar. A crash between steps never leaves a partial or unprotected CSV.

Dummy landmarks (issue 6, thesis §4.2, DESIGN §6): with ``ExportOptions.dummies`` set, step 1 is followed by
a *new* selection of ``L' ⊃ L`` (fresh OS entropy, or derived from the export key and the release digest
when there is a key: never the preview's selection), and the release, its budget pre-check and the final
landmark-sum check all use ``L'`` and ``ε − ε_sel``. By sequential composition the whole is ε-private for L. The sidecar's
``epsilon`` is the total ε and its ``epsilon_selection`` the object :func:`~.dummies.release_record`
(ε_sel, share, mechanism, generator, utility and the release's ε − ε_sel), ``null`` without dummies; the
sidecar never says which events, nor how many, are dummies, and the CSV has the usual columns only.

Denoising (issue 12, ``ExportOptions.denoise``, on by default): the denoiser needs the whole released series,
so step 2 keeps the raw release whole (its chunks are views of it) instead of writing them, and
:func:`_post_process` denoises it after the loop from the released values, budgets, flags and public
settings only; the rows are then written as in step 2. It is post-processing of the secure release: the
checks and the verdict are those of the raw release, and the sidecar's ``post_processing`` says what was
applied (null for the raw release).
"""

from __future__ import annotations

import csv
import errno
import math
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.denoise import denoise
from ..data.periods import describe as describe_periods
from ..data.series import Series
from ..engine.pipeline import (
    KINDS,
    NUMBA_BACKENDS,
    ExportRunner,
    Plan,
    grid_exponent,
    plan,
    public_uniforms,  # noqa: F401  (re-exported: the audits draw exactly as the export does)
)
from ..engine.release import fixed_budgets, normalize_landmarks
from ..kernel import securenoise
from ..kernel.dummies import DummySelection, DummySettings, release_record, select_for_release
from ..kernel.guarantee import GuaranteeError, GuaranteeResult, allocatable, check_guarantee
from ..kernel.schemes import SCHEMES
from ..kernel.securenoise import Cancelled
from ..kernel.settings import ALL_SCHEMES, PrivacySettings, categories_from_data, categories_from_data_risk
from . import keys, ledger
from .guard import OutputRefused, check_output
from .ledger import BatchOrigin
from .writers import (
    AtomicFile,
    PairLock,
    build_sidecar,
    commit_pair,
    file_sha256,
    format_timestamps,
    neutralise_cells,
    release_statement,
    sidecar_path,
    sidecar_text,
    value_units,
)

__all__ = ["Cancelled", "ExportError", "ExportOptions", "ExportResult", "categories_refusal",
           "check_categories_from_data", "draw_dummies", "export_key", "export_release", "key_selection_words",
           "new_export_key", "preflight", "value_decimals"]

Progress = Callable[[int, int], None]


class ExportError(RuntimeError):
    """A clear, one-line reason why nothing was written."""


@dataclass(frozen=True)
class ExportOptions:
    scheme: str
    include_budget: bool = False
    include_flags: bool = False
    # A secret export key (issues 17 and 42): bytes of at least 32, or a hex string of at least 64 digits, not
    # structured (keys.key_weakness); None = fresh OS entropy. Small integer seeds are refused (previews only).
    # The noise is drawn from the key bound to the release's digest (keys.py): the same key re-creates the same
    # release only.
    seed: bytes | str | None = None
    backend: str | None = None  # None = the default floating-point-safe backend for the kind
    force: bool = False
    chunk_rows: int = 1 << 16
    # Dummy landmarks (issue 6): None = off. On: the export draws L' ⊃ L itself (see the module docstring);
    # the caller passes the true landmarks and the total ε as usual.
    dummies: DummySettings | None = None
    # The input's file name goes into the public sidecar only when the user asks: it can be a person's name.
    include_input_name: bool = False
    # Text cells starting with = + - @ tab CR get a leading ' unless the user asks for verbatim labels.
    verbatim_labels: bool = False
    # The user's explicit consent to publish a category list that came from the data itself (published whole in
    # the sidecar, which says so). A categorical release without a public list (settings.categories None) is
    # refused unless this is True (preflight); a caller that derived a list from the data itself (lmdk batch's
    # union of every person's labels) sets it so that the sidecar says so.
    categories_from_data: bool = False
    # The ledger id this export re-creates (same key, same input: the same release, no new ε spent).
    reexport_of: str | None = None
    # Post-processing (issue 12): write the denoised release instead of the raw one (see _post_process).
    denoise: bool = True
    # The label(s) of the suggestion rule(s) that found the landmarks on this series' own values (the app's
    # Session.landmark_rules, a batch's --rule): the statement says that where they are tells about the values.
    landmarks_rule: str | None = None
    # Other private files the release and its sidecar must never replace (a batch's input files, a landmark
    # list), besides the series' own input.
    protect: tuple[str, ...] = ()
    # A batch person's origin (the table's file(s), id column and id) for the private ledger (issue 42).
    origin: BatchOrigin | None = None


@dataclass(frozen=True)
class ExportResult:
    path: Path
    sidecar: Path
    rows: int
    guarantee: GuaranteeResult
    backend: str
    seeded: bool
    columns: tuple[str, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)
    dummies: dict[str, Any] | None = None  # the sidecar's epsilon_selection object (public), None if off
    sidecar_doc: dict[str, Any] = field(default_factory=dict)  # what the sidecar says (public)
    post_processing: dict[str, Any] | None = None  # the sidecar's post_processing object, None for raw values
    # Earlier releases of the same input in the ledger (count, total ε; re-exports not counted), and the
    # composition note to show now that this one is written (None: the first release, or the same release
    # again). same_release_as: the ledger entry this keyed export made again, bit for bit (no new ε).
    prior_releases: tuple[int, float] = (0, 0.0)
    composition: str | None = None
    same_release_as: str | None = None


# ------------------------------------------------------------------------------------------- backends
BACKEND_ALIASES = ("exact", "opendp")


def resolve_backend(kind: str, name: str | None) -> str:
    """``None``/"exact" → the kind's default floating-point-safe sampler; "opendp" → OpenDP's sampler when it
    has one for the kind; a full backend name is accepted as is."""
    available = securenoise.backends_for(kind)
    if name is None or name == "exact":
        return available[0]
    if name == "opendp":
        found = [b for b in available if b.startswith("opendp")]
        if not found:
            raise ExportError(f"OpenDP has no sampler for {kind} series here; use the exact backend")
        return found[0]
    if name not in available:
        raise ExportError(f"noise backend {name!r} is not available for {kind} series; choose one of: "
                          f"{', '.join(available)}")
    return name


# ------------------------------------------------------------------------------------------- keys
KEY_HELP = ("an export key is a random secret of 64 hex digits (256 bits): make one with --new-key, the app's "
            "generator or `lmdk_gui.core.publish.export.new_export_key()`; small integer seeds are for previews "
            "only, and a short or patterned key can be guessed and the release de-noised")


def new_export_key() -> str:
    """A fresh 256-bit export key as 64 hex digits (for reproducible exports; keep it secret). Always one that
    :func:`export_key` accepts (a random key shows a refused pattern with probability < 10⁻¹⁰: drawn again)."""
    while True:
        key = secrets.token_hex(32)
        if keys.key_weakness(bytes.fromhex(key)) is None:
            return key


def export_key(seed: bytes | str | None) -> bytes | None:
    """The key bytes of ``ExportOptions.seed``; :class:`ExportError` (one line) for anything that is not a
    secret key (:func:`.keys.key_weakness`: 64 hex digits or more, no long runs or repeated blocks, at least
    128 bits by its digits' spread) — in particular every integer."""
    if seed is None:
        return None
    if isinstance(seed, bytes | bytearray):
        key = bytes(seed)
    elif isinstance(seed, str):
        text = "".join(seed.split()).lower().removeprefix("0x")
        if not text or any(c not in "0123456789abcdef" for c in text):
            raise ExportError(f"the export key must be hex digits; {KEY_HELP}")
        if len(text) < keys.KEY_HEX_DIGITS:
            raise ExportError(f"the export key has {len(text)} hex digits, fewer than {keys.KEY_HEX_DIGITS}; "
                              f"{KEY_HELP}")
        key = bytes.fromhex(text if len(text) % 2 == 0 else "0" + text)
    else:
        raise ExportError(f"an integer seed cannot seed an export; {KEY_HELP}")
    weak = keys.key_weakness(key)
    if weak is not None:
        raise ExportError(f"{weak}; {KEY_HELP}")
    return key


def key_selection_words(key: bytes | None, digest: bytes) -> securenoise.WordSource:
    """The dummy selection's randomness, from the same vetted word source as the export noise (issue 17):
    fresh OS entropy, or a keystream of the export key bound to the release ``digest`` (:func:`release_digest`)
    under its own label, so it is independent of the noise words drawn for the same release."""
    return keys.selection_words(key, digest)


def release_digest(series: Series, landmarks, settings: PrivacySettings, options: ExportOptions) -> bytes:
    """What a keyed export's noise and dummy selection are bound to (:func:`.keys.release_digest`): the loaded
    series, the true landmarks and settings, the scheme, dummies, backend and chunk size of ``options``."""
    return keys.release_digest(series, normalize_landmarks(landmarks, series.n), settings, scheme=options.scheme,
                               dummies=options.dummies, backend=resolve_backend(series.kind, options.backend),
                               chunk_rows=options.chunk_rows)


# ------------------------------------------------------------------------------------- public precision
# The sampler's grid exponent (grid_exponent, from Δ and the release's ε only) is the numeric kind's:
# core.pipeline; it is imported above. The printed decimals are post-processing of the sampler's output.
def value_decimals(kind: str, settings: PrivacySettings) -> int | None:
    """Decimals written for released values (public settings only; issue 14): numeric values on the decimal
    grid ``10**(floor(log10(Δ/ε)) − 3)`` — four significant digits of the smallest noise scale any event can
    have, never finer than the sampler's grid (≤ Δ/ε·2**-20) —, locations on the sampler's 1e-7° grid.
    A negative count rounds to tens, hundreds…; None leaves the column as it is (categorical)."""
    if kind == "numeric":
        return 3 - math.floor(math.log10(settings.sensitivity / settings.epsilon))
    if kind == "location":
        return 7
    return None


# ----------------------------------------------------------------------------------------- pre-flight
def preflight(series: Series, landmarks, settings: PrivacySettings, output: str | os.PathLike,
              options: ExportOptions) -> tuple[np.ndarray, str]:
    """Everything that can be checked before drawing noise. Returns (landmarks, backend)."""
    try:
        settings.validate()
    except ValueError as e:
        raise ExportError(str(e)) from None
    export_key(options.seed)  # a small integer or a short key: refused before anything else
    check_categories_from_data(series, settings, options)
    if options.scheme not in ALL_SCHEMES:
        raise ExportError(f"unknown scheme {options.scheme!r}; choose one of {', '.join(ALL_SCHEMES)}")
    backend = resolve_backend(series.kind, options.backend)
    if backend not in NUMBA_BACKENDS:
        if options.scheme == "adaptive":
            raise ExportError("the Adaptive scheme draws its noise one event at a time inside its loop; only "
                              "the default (exact) backend can do that")
        if options.seed is not None:
            raise ExportError(f"the {backend} backend draws from its own OS randomness and cannot be seeded")
    _check_output_paths(series, Path(output), options.force, options.protect)
    src = series.source
    if src is not None and src.sha256:  # "" = built from an in-memory frame (batch): no file to re-hash
        try:
            now = file_sha256(src.path)
        except OSError as e:
            raise ExportError(f"the input file {src.path} cannot be read any more ({e.strerror}); "
                              "reopen it before exporting") from None
        if now != src.sha256:
            raise ExportError(f"the input file {src.path} has changed since it was opened (SHA-256 differs); "
                              "reopen it before exporting")
    if options.dummies is not None:
        try:
            options.dummies.validate()
        except ValueError as e:
            raise ExportError(str(e)) from None
    lm = normalize_landmarks(landmarks, series.n)
    _precheck_budgets(options.scheme, series.n, lm, settings.epsilon)
    _check_noise_range(series, lm, settings, options.scheme, options.dummies is not None)
    return lm, backend


def categories_refusal(n_labels: int) -> str:
    """The one line saying why a release with the data's own category list is refused, and what to do."""
    return (f"{categories_from_data_risk(n_labels)}; give a public category list, or accept publishing the "
            "data's own list (lmdk: --categories a,b,c or --categories-from-data; in the app: the export's "
            "question); nothing was written")


def check_categories_from_data(series: Series, settings: PrivacySettings, options: ExportOptions) -> None:
    """DESIGN §3: a category list derived from the data leaks which labels occur (a label held once flips the
    published list); every surface goes through here, so none publishes it without the explicit choice
    ``ExportOptions.categories_from_data``."""
    if categories_from_data(series.kind, settings) and not options.categories_from_data:
        raise ExportError(categories_refusal(len(series.categories or ())))


def _check_output_paths(series: Series, out: Path, force: bool, protect: tuple[str, ...] = ()) -> None:
    """The CSV and the sidecar through the one output guard (:mod:`.guard`): not a folder, never the input
    or another private file in ``protect`` (same file, through any link), not a special file, no overwrite
    without ``force`` (issue 17, findings 7 and 8; issue 42, finding 3)."""
    if out.is_dir():
        raise ExportError(f"{out} is a folder; choose a file name for the release")
    if not out.parent.exists():
        raise ExportError(f"the folder {out.parent} does not exist")
    src = series.source
    inputs = ((src.path,) if src is not None and src.path else ()) + tuple(protect)
    for p, what in ((out, "release"), (sidecar_path(out), "release's metadata")):
        try:
            check_output(p, inputs, force=force, what=what,
                         overwrite_hint="choose another name or allow overwriting (--force)")
        except OutputRefused as e:
            raise ExportError(str(e)) from None


def _min_budget(scheme: str, n: int, lm: np.ndarray, epsilon: float, dummies: bool) -> float:
    """The smallest positive ε_t the release can give (Adaptive: a landmark's ε_a/(|L|+1), which no regular
    event goes below). With dummies L′ can grow up to every event; ε − ε_sel is checked again later."""
    eps_a = allocatable(epsilon, n)
    if scheme == "adaptive":
        return eps_a / ((n if dummies else lm.size) + 1)
    b = fixed_budgets(scheme, n, lm, eps_a)
    pos = b[b > 0]
    return float(pos.min()) if pos.size else eps_a


def _check_noise_range(series: Series, lm: np.ndarray, settings: PrivacySettings, scheme: str,
                       dummies: bool) -> None:
    """ε and the values the floating-point-safe sampler can take, checked before any noise is drawn, with a
    message naming what is wrong (issue 17, finding 12: never "ran out of random words")."""
    if series.kind != "numeric" or series.n == 0:
        return
    e = grid_exponent(settings)
    eps_t = _min_budget(scheme, series.n, lm, settings.epsilon, dummies)
    try:
        securenoise.laplace_grid(settings.sensitivity / eps_t, settings.sensitivity, e)
    except ValueError:
        raise ExportError(f"ε = {settings.epsilon:g} is too small for the {scheme} scheme here: some event would "
                          f"get ε_t = {eps_t:.3g}, noise over ten billion times the sensitivity; use a larger "
                          f"--epsilon") from None
    x = KINDS[series.kind].prepare(series, settings).x  # what the sampler gets: clamped to the bounds
    limit = securenoise.max_abs_value(e)
    bad = np.flatnonzero(~(np.abs(x) <= limit))
    if bad.size:
        i = int(bad[0])
        col = _value_columns(series)[0]
        t = format_timestamps(series.times[i:i + 1], "iso")[0]
        clip = settings.clip_range()
        row = _file_row(series, lambda v: ~(np.abs(v if clip is None else np.clip(v, clip[0], clip[1])) <= limit))
        where = f"row {row} of {Path(series.source.path).name} ({t})" if row and series.source else \
            f"{t} (event {i + 1} in time order)"
        raise ExportError(f"the value {series.values[i]:g} at {where}, column {col!r}, is out of range for the "
                          f"noise sampler (|value| ≤ {limit:.3g} with Δ = {settings.sensitivity:g}, ε = "
                          f"{settings.epsilon:g}); set --bounds or fix the value")


def _file_row(series: Series, bad: Callable[[np.ndarray], np.ndarray]) -> int | None:
    """The file row (1-based line, header = 1, as the loader's messages count) of the first value for which
    ``bad`` holds; None when the file cannot tell (read again on this error path only)."""
    src = series.source
    if src is None or not src.value_cols:
        return None
    try:
        df = pd.read_csv(src.path, sep=src.delimiter, usecols=[src.value_cols[0]], dtype=str,
                         skip_blank_lines=False, keep_default_na=False)
        vals = pd.to_numeric(df[src.value_cols[0]].str.strip(), errors="coerce").to_numpy(dtype=np.float64)
    except (OSError, ValueError, KeyError):
        return None
    hits = np.flatnonzero(bad(np.nan_to_num(vals, nan=0.0)))
    return int(hits[0]) + 2 if hits.size else None


def _precheck_budgets(scheme: str, n: int, lm: np.ndarray, epsilon: float) -> None:
    """The landmark-sum check for schemes whose budgets are known before any noise is drawn."""
    if scheme != "adaptive":
        res = check_guarantee(fixed_budgets(scheme, n, lm, allocatable(epsilon, n)), lm, epsilon)
        if not res.holds:
            raise GuaranteeError(res, scheme)


def draw_dummies(series: Series, landmarks: np.ndarray, settings: PrivacySettings,
                 options: ExportOptions, digest: bytes = b"") -> DummySelection:
    """The export's own selection of ``L'``: from fresh OS entropy, or derived from the export key bound to
    the release ``digest`` (:func:`release_digest`)."""
    assert options.dummies is not None
    key = export_key(options.seed)
    if key is not None and not digest:
        digest = release_digest(series, landmarks, settings, options)
    words = key_selection_words(key, digest)
    try:
        return select_for_release(series.n, landmarks, settings.epsilon, options.dummies, words=words)
    except ValueError as e:  # Optimal beyond its limit: one clear message
        raise ExportError(str(e)) from None


# --------------------------------------------------------------------------------- secure noise hooks
# The kinds own them (core.pipeline); these names stay for the audits that draw exactly as the export does.
_SEC_ONE = {name: kind.secure_one for name, kind in KINDS.items()}


def kernel_aux(kind: str, words: np.ndarray, settings: PrivacySettings):
    """What the Adaptive kernel passes to the ``_SEC_ONE`` hook: the word buffer (numeric: with the public
    grid exponent)."""
    return KINDS[kind].kernel_aux(words, settings)


def _fresh_noise(kind: str, x: np.ndarray, budgets: np.ndarray, settings: PrivacySettings, k: int,
                 backend: str, source) -> np.ndarray:
    """Noisy releases of the events ``x`` with budgets ``budgets`` (all > 0)."""
    return KINDS[kind].secure_noise(x, budgets, settings, k, backend, source)


# ------------------------------------------------------------------------------------------- columns
def _value_columns(series: Series) -> list[str]:
    return KINDS[series.kind].value_columns(series)


def _time_column(series: Series) -> tuple[str, str]:
    src = series.source
    if src is None:
        return "timestamp", "iso"
    if src.time_format == "date+hour":
        return "timestamp", "iso"
    return src.time_col, src.time_format


# ---------------------------------------------------------------------------------------------- main
@dataclass(frozen=True, eq=False)
class _Planned:
    """One export once every refusal has passed and its plan is made: what the later steps share."""

    series: Series
    options: ExportOptions
    plan: Plan  # the release's landmarks and ε (L' and ε − ε_sel with dummies), its input and fixed budgets
    backend: str
    key: bytes | None
    digest: bytes  # what a keyed release's words are bound to; b"" without a key
    # L and the user's settings: what the ledger keeps for a re-export (private; the release uses the plan's)
    landmarks_true: np.ndarray
    settings_true: PrivacySettings
    selection: dict[str, Any] | None  # the sidecar's epsilon_selection object; None without dummies
    columns: tuple[str, ...]
    time_format: str

    @property
    def landmarks(self) -> np.ndarray:
        return self.plan.landmarks

    @property
    def settings(self) -> PrivacySettings:
        return self.plan.settings


def export_release(series: Series, landmarks, settings: PrivacySettings, output: str | os.PathLike,
                   options: ExportOptions, *, progress: Progress | None = None,
                   should_cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write the protected CSV and its sidecar; see the module docstring for the guarantees.

    The steps run in this order, each only once the one before has succeeded: every refusal and the plan
    (:func:`_plan_release`, no noise drawn yet); the noise, chunk by chunk (:func:`_write_chunks`); the
    independent landmark-sum check on the final budgets (:func:`_check_final`); denoising
    (:func:`_write_denoised`); the sidecar (:func:`_sidecar_doc`); the ledger entry and the renames
    (:func:`_commit`). Until the last step nothing is visible at ``output``."""
    cancelled = should_cancel or (lambda: False)
    job = _plan_release(series, landmarks, settings, output, options, cancelled)
    # Draws Adaptive's public uniforms, or the first fresh release when earlier events republish it, now.
    runner = ExportRunner(job.plan, job.backend, keys.noise_words(job.key, job.digest), options.chunk_rows,
                          lambda i: _describe_event(series, i), keep=options.denoise)
    out = Path(output)
    try:
        with AtomicFile(out) as csv_file:
            writer = _ChunkWriter(csv_file.file, list(job.columns), series, job.time_format, job.plan.inp.labels,
                                  options, value_decimals(series.kind, job.settings))
            _write_chunks(job, runner, writer, progress, cancelled)
            result = _check_final(job, runner.budgets)
            post = _write_denoised(job, runner, writer, cancelled)
            doc = _sidecar_doc(job, result, post)
            prior = _commit(job, out, csv_file, doc, result, cancelled)
    except OSError as e:
        raise ExportError(_os_message(e, out)) from None
    again = options.reexport_of or prior.same_release_as
    note = None if again else ledger.notice_text(prior.count, prior.epsilon, job.settings_true.epsilon)
    warnings = export_warnings(options.scheme, options, dummies=job.selection is not None)
    return ExportResult(out, sidecar_path(out), series.n, result, job.backend, job.key is not None, job.columns,
                        tuple(warnings), job.selection, doc, post, (prior.count, prior.epsilon), note,
                        prior.same_release_as)


def _plan_release(series: Series, landmarks, settings: PrivacySettings, output: str | os.PathLike,
                  options: ExportOptions, cancelled: Callable[[], bool]) -> _Planned:
    """Every refusal, before any noise is drawn: :func:`preflight` (settings, key, a category list from the
    data, scheme and backend, the output guard, the input's SHA-256, dummy settings, the landmark-sum pre-check
    and the sampler's range); then, with dummies, the export's own selection of L' and the same pre-check and
    range check on L' and ε − ε_sel. Returns the plan the noise is drawn from."""
    lm, backend = preflight(series, landmarks, settings, output, options)
    key = export_key(options.seed)
    # A keyed release's words are bound to everything that decides its noise (finding 2 of issue 42).
    digest = release_digest(series, lm, settings, options) if key is not None else b""
    sel, record = None, None
    if options.dummies is not None:
        # From here on the release works on L' and ε − ε_sel (the plan's pre-check and the final check too).
        sel = draw_dummies(series, lm, settings, options, digest)
        record = release_record(sel)
    # This module's allocation functions (replaceable: the audits inject faults through them).
    p = plan(series, lm, settings, options.scheme, sel, budgets_fn=fixed_budgets, allocatable_fn=allocatable)
    del sel
    if p.precheck is not None and not p.precheck.holds:
        raise GuaranteeError(p.precheck, options.scheme)
    if record is not None:
        _check_noise_range(series, p.landmarks, p.settings, options.scheme, False)  # on L' and ε − ε_sel
        if cancelled():
            raise Cancelled("export cancelled")
    time_col, time_format = _time_column(series)
    columns = [time_col, *_value_columns(series)]
    if options.include_budget:
        columns.append("epsilon")
    if options.include_flags:
        columns.append("approximated")
    return _Planned(series, options, p, backend, key, digest, lm, settings, record, tuple(columns), time_format)


def _write_chunks(job: _Planned, runner: ExportRunner, writer: _ChunkWriter, progress: Progress | None,
                  cancelled: Callable[[], bool]) -> None:
    """Draws the release chunk by chunk, in the runner's fixed word order, and writes each chunk's rows to the
    temporary CSV — unless the runner keeps the release whole for denoising (:func:`_write_denoised` writes
    it then). Raises :class:`Cancelled` before any chunk and after the last one when asked to stop."""
    n = job.series.n
    chunks = runner.chunks()
    while True:
        if cancelled():
            raise Cancelled("export cancelled")
        try:
            a, b, vals, approx = next(chunks)
        except StopIteration:
            break
        except securenoise.RandomnessExhausted:
            raise ExportError("the noise sampler ran out of random words for one event "
                              "(astronomically unlikely); nothing was written, try again") from None
        # Denoising needs the whole release: the runner keeps it, its chunks are views of it (chunks kept in
        # a list and joined at the end held it twice, and Adaptive's three times: 160 MB more at 10^7 events).
        if runner.values is None:
            writer.write(a, b, vals, runner.budgets[a:b], approx)
        if progress is not None:
            progress(b, n)
    if n == 0 and progress is not None:
        progress(0, 0)
    if cancelled():  # a cancel that arrives after the last chunk still wins: nothing is renamed
        raise Cancelled("export cancelled")


def _check_final(job: _Planned, budgets: np.ndarray) -> GuaranteeResult:
    """The independent landmark-sum check (:func:`~.guarantee.check_guarantee`, plain numpy) on the budgets the
    release was drawn with, against the release's landmarks and ε (L' and ε − ε_sel with dummies; Adaptive's
    budgets are only known now). Raises :class:`GuaranteeError` when it fails: nothing is then written."""
    result = check_guarantee(budgets, job.landmarks, job.settings.epsilon)
    if not result.holds:
        raise GuaranteeError(result, job.options.scheme)
    return result


def _write_denoised(job: _Planned, runner: ExportRunner, writer: _ChunkWriter,
                    cancelled: Callable[[], bool]) -> dict[str, Any] | None:
    """With denoising on, writes the rows of the post-processed release (:func:`_post_process`, from the checked
    raw release, its budgets, flags and the public settings only) and returns the sidecar's ``post_processing``
    record; None, writing nothing, for a raw release (its rows are already written)."""
    raw = runner.values
    if raw is None:
        return None
    n, budgets = job.series.n, runner.budgets
    values, post = _post_process(job.series.kind, raw, job.plan.noise_budgets(budgets), ~runner.fresh,
                                 job.settings, job.plan.inp.labels)
    for a in range(0, n, runner.chunk):
        if cancelled():
            raise Cancelled("export cancelled")
        b = min(n, a + runner.chunk)
        writer.write(a, b, values[a:b], budgets[a:b], ~runner.fresh[a:b])
    if cancelled():
        raise Cancelled("export cancelled")
    return post


def _sidecar_doc(job: _Planned, result: GuaranteeResult, post: dict[str, Any] | None) -> dict[str, Any]:
    """The public sidecar (:func:`~.writers.build_sidecar`): public settings, the total ε, the checked bound and
    the verdict, never a figure that depends on the landmarks."""
    series, options, settings = job.series, job.options, job.settings
    total_epsilon = job.settings_true.epsilon
    labels = job.plan.inp.labels
    return build_sidecar(
        input_name=_public_input_name(series) if options.include_input_name else None,
        rows=series.n,
        kind=series.kind,
        scheme=options.scheme,
        epsilon=total_epsilon,
        epsilon_selection=job.selection,
        sensitivity=settings.sensitivity if series.kind == "numeric" else None,
        radius_m=settings.radius_m if series.kind == "location" else None,
        bounds=_public_bounds(series, settings),
        bounds_from_data=settings.bounds_from_data and series.kind == "numeric",
        lower_bound=settings.lower_bound if series.kind == "numeric" else None,
        categories=labels if series.kind == "categorical" else None,
        noise_backend=job.backend,
        seeded=job.key is not None,
        landmark_sum=published_landmark_sum(settings.epsilon),
        guarantee_holds=result.holds,
        columns=job.columns,
        statement=release_statement(
            kind=series.kind, scheme=options.scheme, epsilon=total_epsilon, sensitivity=settings.sensitivity,
            radius_m=settings.radius_m, units=value_units(series), dummies=job.selection is not None,
            budget_columns=options.include_budget or options.include_flags, denoised=post is not None,
            landmarks_rule=options.landmarks_rule,
            bounds_from_data=settings.bounds_from_data and series.kind == "numeric",
            resolution=describe_periods(series.periods) if series.periods is not None else None),
        units=value_units(series),
        duplicates=series.source.columns.duplicates if series.source is not None else None,
        categories_from_data=bool(options.categories_from_data) and series.kind == "categorical",
        precision=_precision_text(series.kind, settings),
        formula_cells="verbatim" if options.verbatim_labels else "neutralised",
        post_processing=post,
        resolution=series.periods.resolution if series.periods is not None else None,
        aggregate=series.periods.aggregate if series.periods is not None else None,
    )


def _commit(job: _Planned, out: Path, csv_file: AtomicFile, doc: dict[str, Any], result: GuaranteeResult,
            cancelled: Callable[[], bool]) -> ledger.Prior:
    """Writes the sidecar to its own temporary file, records the release in the private ledger, then — holding
    a lock on the folder — removes the old sidecar, renames the CSV into place, then the sidecar. A failure
    before the renames leaves nothing written; a crash between them never a CSV without its sidecar. Returns
    what the ledger held about the input just before."""
    with AtomicFile(sidecar_path(out)) as side_file:
        side_file.file.write(sidecar_text(doc))
        side_file.finish()
        csv_file.finish()
        if cancelled():
            raise Cancelled("export cancelled")
        # Recorded before the renames: a release the ledger failed to record is never published.
        prior = _record(job.series, job.landmarks_true, job.settings_true, out, job.options, result, job.key,
                        job.series.n, job.digest)
        with PairLock(out):  # no other export commits a CSV/sidecar pair here meanwhile (finding 9)
            commit_pair(csv_file, side_file)  # never a CSV without its sidecar (issue 42, finding 8)
    return prior


def export_warnings(scheme: str, options: ExportOptions, *, dummies: bool) -> list[str]:
    """What the release file itself gives away (said where the choice is made: dialog, command, sidecar)."""
    out = []
    if scheme in REPUBLISHING_SCHEMES and not dummies:
        out.append(REPUBLISH_WARNING)
    if options.include_budget or options.include_flags:
        out.append("the epsilon/approximated columns reveal where the landmarks are (thesis §4.2)")
    if options.seed is not None:
        out.append("this release is seeded with an export key: anyone who holds the key can reproduce its noise"
                   + (" and its dummy selection" if dummies else "") + "; keep the key secret")
    return out


#: Skip and Adaptive republish the previous value at skipped events; Skip skips exactly the landmarks.
REPUBLISHING_SCHEMES = tuple(s.name for s in SCHEMES.values() if s.republishes)
REPUBLISH_WARNING = ("Skip and Adaptive republish the previous value exactly at events they skip (Skip: every "
                     "landmark), so repeated values in the plain CSV show where the landmarks are; add dummy "
                     "landmarks to hide them")


def published_landmark_sum(epsilon: float) -> float:
    """The sidecar's ``landmark_sum``: the public bound the release was checked against — ε, or ε − ε_sel
    with dummies — never a figure of the sum itself. Any such figure, even rounded, is a function of |L|
    (user-level gives (m+1)ε/n, Adaptive m/(m+1) when the series ends in landmarks; issue 42, finding 5).
    The exact value is kept in the private ledger only."""
    return float(epsilon)


def _precision_text(kind: str, settings: PrivacySettings) -> float | None:
    d = value_decimals(kind, settings)
    return None if d is None else float(10.0 ** -d)


def _describe_event(series: Series, i: int) -> str:
    """Event ``i`` for a sampler's bad-input error (Adaptive's loop): its file row when the file can tell
    (the first row holding its value; read again on this error path only), its timestamp and column."""
    if not 0 <= i < series.n:
        return f"event {i + 1}"
    t = format_timestamps(series.times[i:i + 1], "iso")[0]
    v = series.values[i]
    row = _file_row(series, lambda x: x == v) if series.kind == "numeric" else None
    where = f"row {row} of {Path(series.source.path).name} ({t})" if row and series.source else \
        f"the event at {t} (event {i + 1} in time order)"
    return f"{where}, column {_value_columns(series)[0]!r}"


def _record(series: Series, lm: np.ndarray, settings: PrivacySettings, out: Path, options: ExportOptions,
            result: GuaranteeResult, key: bytes | None, n: int, digest: bytes) -> ledger.Prior:
    """The private ledger entry, written before the release is renamed into place (a failure to record it
    leaves nothing written: the accounting never misses a release). Returns what the ledger held about the
    input just before."""
    try:
        return ledger.record_export(series, lm, settings, out, options, result, key, rows=n, bound_to=digest)
    except OSError as e:
        raise ExportError(f"could not record the release in the private ledger {ledger.ledger_path()}: "
                          f"{e.strerror or e}; nothing was written") from None


def _post_process(kind: str, released: np.ndarray, budgets: np.ndarray, approximated: np.ndarray,
                  settings: PrivacySettings, labels: tuple[str, ...] | None) -> tuple[np.ndarray, dict[str, Any]]:
    """The denoised release and the sidecar's ``post_processing`` record, from the raw released values, their
    budgets and flags and the public settings (with dummies: the release on L′ and ε − ε_sel) — nothing else.
    The budgets are the ones the final check examined (Adaptive's as drawn). ``released`` is consumed (numeric:
    it holds the denoised values afterwards)."""
    # (consumed: the raw values are not written; a numeric release's array then holds the denoised ones, one
    # series-sized array fewer: 80 MB at 10^7 events)
    d = denoise(kind, released, budgets, approximated, sensitivity=settings.sensitivity, bounds=settings.bounds,
                radius_m=settings.radius_m, n_categories=len(labels) if labels is not None else None, consume=True,
                lower_bound=settings.lower_bound if kind == "numeric" else None)
    # Only the method's description is published: no counts (the number of fresh events is n − |L| for Skip)
    # and no figure estimated from the raw release (a likelihood, a variance, an origin): those are computed
    # with the per-event budgets, which are a function of L, from values the denoised file does not hold
    # (issue 42, finding 5). The sidecar never says how many events are landmarks, nor how many are dummies.
    params = {k: v for k, v in d.params.items() if v is None or isinstance(v, (str, bool))}
    note = ("the values written are this post-processing of the secure release, computed from its released "
            "values, budgets and the public settings only: the guarantee above is that of the release; "
            "export with --no-denoise for the raw noisy values")
    return d.values, {"method": d.method, "note": note, **params}


def _public_bounds(series: Series, settings: PrivacySettings) -> tuple[float, float] | None:
    """The bounds each event was clamped to (a period series: before aggregation, DESIGN §12)."""
    if series.kind != "numeric":
        return None
    return series.periods.bounds if series.periods is not None else settings.bounds


def _public_input_name(series: Series) -> str:
    return Path(series.source.path).name if series.source else series.name


def _os_message(e: OSError, out: Path) -> str:
    if e.errno == errno.ENOSPC:
        return f"the disk is full: could not write {out}; nothing was written"
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied: cannot write {out}; nothing was written"
    if e.errno == errno.EISDIR:
        return f"{out} is a folder; choose a file name for the release"
    return f"could not write {out}: {e.strerror or e}; nothing was written"


def format_values(v: np.ndarray, decimals: int) -> np.ndarray:
    """Released values as text on the decimal grid ``10**-decimals`` ("" for no value): a deterministic
    function of the sampler's output, so post-processing (issue 14)."""
    out = np.round(np.asarray(v, dtype=np.float64), decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    # (what numpy's char.mod does per value, as a Python loop: 3x faster, and it leaves the GIL to the window
    # between values where char.mod held it for the whole array)
    fmt = f"%.{max(decimals, 0)}f"
    return np.array(["" if x != x else fmt % x for x in out.tolist()], dtype=object)


def _cells(column: np.ndarray) -> list:
    """A column's CSV cells as pandas' writer prints them: text as it is, floats as numpy's shortest repr and
    integers in full (``astype(str)``), no value (NaN) as an empty cell."""
    if column.dtype == object:
        return column.tolist()
    text = column.astype(str)
    if column.dtype.kind == "f":
        text[np.isnan(column)] = ""
    return text.tolist()


#: rows formatted at a time (:meth:`_ChunkWriter.write`): the GIL is held ≤ 7 ms at a time, not 45-53 ms
WRITE_ROWS = 1 << 14


class _ChunkWriter:
    """Formats release rows and appends them to the open CSV file, chunk by chunk.

    Released values are printed on the public decimal grid of :func:`value_decimals` (post-processing of
    the sampler's output). Text cells — category labels and the header — that a spreadsheet would take for a
    formula get a leading single quote unless ``options.verbatim_labels`` (OWASP's CSV-injection rule;
    numbers are never altered)."""

    def __init__(self, fh, columns: list[str], series: Series, time_format: str,
                 labels: tuple[str, ...] | None, options: ExportOptions, decimals: int | None = None) -> None:
        self.fh = fh
        verbatim = options.verbatim_labels
        self.columns = columns
        self.header_cells = columns if verbatim else neutralise_cells(columns)
        self.series = series
        self.time_format = time_format
        shown = list(labels) if labels is not None else None
        if shown is not None and not verbatim:
            shown = neutralise_cells(shown)
        self.labels = np.asarray(shown + [""], dtype=object) if shown is not None else None
        self.options = options
        self.decimals = decimals
        self.header = True

    def _round(self, v: np.ndarray) -> np.ndarray:
        return v if self.decimals is None else format_values(v, self.decimals)

    def write(self, a: int, b: int, vals: np.ndarray, budgets: np.ndarray, approx: np.ndarray) -> None:
        """Rows a..b-1 (``vals``, ``budgets``, ``approx``: theirs), formatted ``WRITE_ROWS`` at a time: numpy's
        text functions (the timestamps') hold the GIL for a whole call, and with pandas' CSV writer a chunk of
        65,536 rows held it 45-53 ms at a time (a stall of the window during an export)."""
        for i in range(0, b - a, WRITE_ROWS):
            j = min(b - a, i + WRITE_ROWS)
            self._write(a + i, a + j, vals[i:j], budgets[i:j], approx[i:j])

    def _write(self, a: int, b: int, vals: np.ndarray, budgets: np.ndarray, approx: np.ndarray) -> None:
        s = self.series
        names = self.header_cells
        cols: dict[str, Any] = {names[0]: format_timestamps(s.times[a:b], self.time_format)}
        if s.kind == "location":
            cols[names[1]] = self._round(vals[:, 0])
            cols[names[2]] = self._round(vals[:, 1])
            rest = list(zip(names[3:], self.columns[3:], strict=True))
        elif s.kind == "categorical":
            assert self.labels is not None
            cols[names[1]] = self.labels[vals]  # code -1 → "" (nothing released, no fallback)
            rest = list(zip(names[2:], self.columns[2:], strict=True))
        else:
            cols[names[1]] = self._round(vals)
            rest = list(zip(names[2:], self.columns[2:], strict=True))
        for shown, name in rest:
            if name == "epsilon":
                cols[shown] = budgets
            elif name == "approximated":
                cols[shown] = approx.astype(np.int8)
        if s.kind == "categorical":
            self._write_text_rows(cols)
        else:
            # Rows joined here, not by pandas' CSV writer: timestamps and numbers hold no comma, quote, CR or LF,
            # so each row is its cells joined by commas, as the csv module writes them (the header, which may
            # hold any text, goes through the csv module). pandas also turned each text column into an Arrow
            # array and back: the writer took 1.6 µs per row, ≈ 0.6 now.
            if self.header:
                csv.writer(self.fh, lineterminator="\n").writerow(list(cols))
            rows = "\n".join(map(",".join, zip(*(_cells(np.asarray(c)) for c in cols.values()), strict=True)))
            if rows:
                self.fh.write(rows + "\n")
        self.header = False

    def _write_text_rows(self, cols: dict[str, Any]) -> None:
        """Rows with free text (category labels): every cell holding , " CR or LF is quoted — pandas' writer
        leaves a lone CR unquoted, which splits the row for every CSV reader."""
        if self.header:
            self.fh.write(",".join(_csv_cell(str(c)) for c in cols) + "\n")
        parts = []
        for v in cols.values():
            arr = np.asarray(v)
            if arr.dtype.kind == "f":
                parts.append([repr(float(x)) for x in arr])
            else:
                parts.append([_csv_cell(str(x)) for x in arr.tolist()])
        if parts and parts[0]:
            self.fh.write("\n".join(",".join(row) for row in zip(*parts, strict=True)) + "\n")


def _csv_cell(text: str) -> str:
    if any(ch in text for ch in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text
