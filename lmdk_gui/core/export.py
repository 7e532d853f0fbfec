"""Export: the one step that must never go wrong (DESIGN §5, §9; issues 2 and 4).

``export_release`` writes the release of one scheme with *fresh* floating-point-safe noise
(:mod:`.securenoise`, OS entropy unless the caller asks for a seed), streaming in chunks with a progress
callback and a cancel flag, through :class:`~.writers.AtomicFile`. Order of work:

1. Pre-flight, before any noise is drawn: settings, scheme/backend, output path (not a folder, not the
   input, no overwrite without ``force``), the input file still has the SHA-256 it had when loaded, and —
   for schemes whose budgets are known up front — the landmark-sum check.
2. Chunks of rows: noise for the fresh events, approximations republish the previous release, rows are
   appended to the temporary file; progress after each chunk; cancel between chunks.
3. The independent landmark-sum check on the final budgets (Adaptive's budgets are only known now). A
   failure raises :class:`~.guarantee.GuaranteeError` and the temporary file is removed.
4. The sidecar is written to its own temporary file; then the old sidecar (if any) is removed, the CSV is
   renamed into place, then the sidecar. A crash between steps never leaves a partial or unprotected CSV.

Dummy landmarks (issue 6, thesis §4.2, DESIGN §6): with ``ExportOptions.dummies`` set, step 1 is followed by
a *new* selection of ``L' ⊃ L`` (fresh OS entropy, or derived from the export's seed when there is one:
never the preview's selection), and the release, its budget pre-check and the final landmark-sum check all
use ``L'`` and ``ε − ε_sel``. By sequential composition the whole is ε-private for L. The sidecar's
``epsilon`` is the total ε and its ``epsilon_selection`` the object :func:`~.dummies.release_record`
(ε_sel, share, mechanism, generator, utility and the release's ε − ε_sel), ``null`` without dummies; the
sidecar never says which events, nor how many, are dummies, and the CSV has the usual columns only.

Denoising (issue 12, ``ExportOptions.denoise``, on by default): the denoiser needs the whole released series,
so step 2 keeps the raw chunks (n values) instead of writing them, and :func:`_post_process` denoises them
after the loop from the released values, budgets, flags and public settings only; the rows are then written
as in step 2. It is post-processing of the secure release: the checks and the verdict are those of the raw
release, and the sidecar's ``post_processing`` says what was applied (null for the raw release).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import securenoise
from .denoise import denoise
from .dummies import (
    EXPORT_STREAM,
    DummySelection,
    DummySettings,
    release_record,
    select_for_release,
    selection_rng,
)
from .guarantee import GuaranteeError, GuaranteeResult, allocatable, check_guarantee
from .pipeline import (
    KINDS,
    NUMBA_BACKENDS,
    ExportRunner,
    SamplerExhausted,
    plan,
    public_uniforms,  # noqa: F401  (re-exported: the audits draw exactly as the export does)
)
from .release import fixed_budgets, normalize_landmarks
from .securenoise import Cancelled
from .series import Series
from .settings import ALL_SCHEMES, PrivacySettings
from .writers import AtomicFile, build_sidecar, file_sha256, format_timestamps, sidecar_path, sidecar_text

__all__ = ["Cancelled", "ExportError", "ExportOptions", "ExportResult", "draw_dummies", "export_release",
           "preflight"]

Progress = Callable[[int, int], None]


class ExportError(RuntimeError):
    """A clear, one-line reason why nothing was written."""


@dataclass(frozen=True)
class ExportOptions:
    scheme: str
    include_budget: bool = False
    include_flags: bool = False
    seed: int | None = None
    backend: str | None = None  # None = the default floating-point-safe backend for the kind
    force: bool = False
    chunk_rows: int = 1 << 16
    # Dummy landmarks (issue 6): None = off. On: the export draws L' ⊃ L itself (see the module docstring);
    # the caller passes the true landmarks and the total ε as usual.
    dummies: DummySettings | None = None
    # The input's file name goes into the public sidecar only when the user asks: it can be a person's name.
    include_input_name: bool = False
    # Post-processing (issue 12): write the denoised release instead of the raw one (see _post_process).
    denoise: bool = True


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
    post_processing: dict[str, Any] | None = None  # the sidecar's post_processing object, None for raw values


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


# ----------------------------------------------------------------------------------------- pre-flight
def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def preflight(series: Series, landmarks, settings: PrivacySettings, output: str | os.PathLike,
              options: ExportOptions) -> tuple[np.ndarray, str]:
    """Everything that can be checked before drawing noise. Returns (landmarks, backend)."""
    try:
        settings.validate()
    except ValueError as e:
        raise ExportError(str(e)) from None
    if options.scheme not in ALL_SCHEMES:
        raise ExportError(f"unknown scheme {options.scheme!r}; choose one of {', '.join(ALL_SCHEMES)}")
    backend = resolve_backend(series.kind, options.backend)
    if backend not in NUMBA_BACKENDS:
        if options.scheme == "adaptive":
            raise ExportError("the Adaptive scheme draws its noise one event at a time inside its loop; only "
                              "the default (exact) backend can do that")
        if options.seed is not None:
            raise ExportError(f"the {backend} backend draws from its own OS randomness and cannot be seeded")
    out = Path(output)
    if out.is_dir():
        raise ExportError(f"{out} is a folder; choose a file name for the release")
    if not out.parent.exists():
        raise ExportError(f"the folder {out.parent} does not exist")
    src = series.source
    if src is not None and _same_file(out, Path(src.path)):
        raise ExportError(f"refusing to write the release over its own input file {out}")
    if not options.force:
        for p in (out, sidecar_path(out)):
            if p.exists():
                raise ExportError(f"{p} already exists; choose another name or allow overwriting (--force)")
    if src is not None:
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
    return lm, backend


def _precheck_budgets(scheme: str, n: int, lm: np.ndarray, epsilon: float) -> None:
    """The landmark-sum check for schemes whose budgets are known before any noise is drawn."""
    if scheme != "adaptive":
        res = check_guarantee(fixed_budgets(scheme, n, lm, allocatable(epsilon, n)), lm, epsilon)
        if not res.holds:
            raise GuaranteeError(res, scheme)


def draw_dummies(series: Series, landmarks: np.ndarray, settings: PrivacySettings,
                 options: ExportOptions) -> DummySelection:
    """The export's own selection of ``L'``: from fresh OS entropy, or derived from ``options.seed``."""
    assert options.dummies is not None
    rng = selection_rng(options.seed, EXPORT_STREAM)
    try:
        return select_for_release(series.n, landmarks, settings.epsilon, options.dummies, rng=rng)
    except ValueError as e:  # Optimal beyond its limit: one clear message
        raise ExportError(str(e)) from None


# --------------------------------------------------------------------------------- secure noise hooks
# The kinds own them (core.pipeline); these names stay for the audits that draw exactly as the export does.
_SEC_ONE = {name: kind.secure_one for name, kind in KINDS.items()}


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
def export_release(series: Series, landmarks, settings: PrivacySettings, output: str | os.PathLike,
                   options: ExportOptions, *, progress: Progress | None = None,
                   should_cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write the protected CSV and its sidecar; see the module docstring for the guarantees."""
    lm, backend = preflight(series, landmarks, settings, output, options)
    cancelled = should_cancel or (lambda: False)
    total_epsilon = settings.epsilon
    record = None
    sel = None
    if options.dummies is not None:
        # From here on the release works on L' and ε − ε_sel (the plan's pre-check and the final check too).
        sel = draw_dummies(series, lm, settings, options)
        record = release_record(sel)
    # This module's allocation functions (replaceable: the audits inject faults through them).
    p = plan(series, lm, settings, options.scheme, sel, budgets_fn=fixed_budgets, allocatable_fn=allocatable)
    del sel
    if p.precheck is not None and not p.precheck.holds:
        raise GuaranteeError(p.precheck, options.scheme)
    if record is not None and cancelled():
        raise Cancelled("export cancelled")
    lm, settings = p.landmarks, p.settings
    out = Path(output)
    n = series.n
    scheme = options.scheme
    seeded = options.seed is not None
    source = (securenoise.WordSource.from_seed(options.seed) if options.seed is not None
              else securenoise.WordSource.from_os())
    labels = p.inp.labels
    time_col, time_format = _time_column(series)
    value_cols = _value_columns(series)
    columns = [time_col, *value_cols]
    if options.include_budget:
        columns.append("epsilon")
    if options.include_flags:
        columns.append("approximated")
    warnings = []
    if options.include_budget or options.include_flags:
        warnings.append("the epsilon/approximated columns reveal where the landmarks are (thesis §4.2)")
    if seeded:
        warnings.append("this release is seeded: anyone who holds the seed can reproduce its noise"
                        + (" and its dummy selection" if record is not None else ""))

    # Draws Adaptive's public uniforms, or the first fresh release when earlier events republish it, now.
    runner = ExportRunner(p, backend, source, options.chunk_rows)
    budgets = runner.budgets
    raw: list[np.ndarray] | None = [] if options.denoise else None

    try:
        with AtomicFile(out) as csv_file:
            writer = _ChunkWriter(csv_file.file, columns, series, time_format, labels, options)
            done = 0
            chunks = runner.chunks()
            while True:
                if cancelled():
                    raise Cancelled("export cancelled")
                try:
                    a, b, vals, approx = next(chunks)
                except StopIteration:
                    break
                except SamplerExhausted:
                    raise ExportError("the noise sampler ran out of random words for one event "
                                      "(astronomically unlikely); nothing was written, try again") from None
                if raw is not None:  # denoising needs the whole series: keep the chunk, write after the loop
                    raw.append(vals)
                else:
                    writer.write(a, b, vals, budgets[a:b], approx)
                done = b
                if progress is not None:
                    progress(done, n)
            if n == 0 and progress is not None:
                progress(0, 0)
            if cancelled():  # a cancel that arrives after the last chunk still wins: nothing is renamed
                raise Cancelled("export cancelled")
            result = check_guarantee(budgets, lm, settings.epsilon)
            if not result.holds:
                raise GuaranteeError(result, scheme)
            post = None
            if raw is not None:
                values, post = _post_process(series.kind, raw, budgets, ~runner.fresh, settings, labels)
                for a in range(0, n, runner.chunk):
                    if cancelled():
                        raise Cancelled("export cancelled")
                    b = min(n, a + runner.chunk)
                    writer.write(a, b, values[a:b], budgets[a:b], ~runner.fresh[a:b])
                if cancelled():
                    raise Cancelled("export cancelled")
            doc = build_sidecar(
                input_name=_public_input_name(series) if options.include_input_name else None,
                rows=n,
                kind=series.kind,
                scheme=scheme,
                epsilon=total_epsilon,
                epsilon_selection=record,
                sensitivity=settings.sensitivity if series.kind == "numeric" else None,
                radius_m=settings.radius_m if series.kind == "location" else None,
                bounds=settings.bounds if series.kind == "numeric" else None,
                categories=labels if series.kind == "categorical" else None,
                noise_backend=backend,
                seeded=seeded,
                landmark_sum=result.worst,
                guarantee_holds=result.holds,
                columns=columns,
                post_processing=post,
            )
            side = sidecar_path(out)
            with AtomicFile(side) as side_file:
                side_file.file.write(sidecar_text(doc))
                side_file.finish()
                csv_file.finish()
                if side.exists():  # never leave an old sidecar describing the new CSV
                    side.unlink()
                csv_file.commit()
                side_file.commit()
    except OSError as e:
        raise ExportError(_os_message(e, out)) from None
    return ExportResult(out, sidecar_path(out), n, result, backend, seeded, tuple(columns), tuple(warnings),
                        record, post)


def _post_process(kind: str, chunks: list[np.ndarray], budgets: np.ndarray, approximated: np.ndarray,
                  settings: PrivacySettings, labels: tuple[str, ...] | None) -> tuple[np.ndarray, dict[str, Any]]:
    """The denoised release and the sidecar's ``post_processing`` record, from the raw released chunks, their
    budgets and flags and the public settings (with dummies: the release on L′ and ε − ε_sel) — nothing else.
    The budgets are the ones the final check examined (Adaptive's as drawn)."""
    released = np.concatenate(chunks) if chunks else np.empty((0, 2) if kind == "location" else (0,))
    d = denoise(kind, released, budgets, approximated, sensitivity=settings.sensitivity, bounds=settings.bounds,
                radius_m=settings.radius_m, n_categories=len(labels) if labels is not None else None)
    # Counts are left out: the number of fresh events is n − |L| for Skip, and the sidecar never says how many
    # events are landmarks (with dummies: nor how many are dummies).
    params = {k: v for k, v in d.params.items() if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool))}
    note = ("the values written are this post-processing of the secure release, computed from its released "
            "values, budgets and the public settings only: the guarantee above is that of the release; "
            "export with --no-denoise for the raw noisy values")
    return d.values, {"method": d.method, "note": note, **params}


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


class _ChunkWriter:
    """Formats release rows and appends them to the open CSV file, chunk by chunk."""

    def __init__(self, fh, columns: list[str], series: Series, time_format: str,
                 labels: tuple[str, ...] | None, options: ExportOptions) -> None:
        self.fh = fh
        self.columns = columns
        self.series = series
        self.time_format = time_format
        self.labels = np.asarray(list(labels) + [""], dtype=object) if labels is not None else None
        self.options = options
        self.header = True

    def write(self, a: int, b: int, vals: np.ndarray, budgets: np.ndarray, approx: np.ndarray) -> None:
        s = self.series
        cols: dict[str, Any] = {self.columns[0]: format_timestamps(s.times[a:b], self.time_format)}
        names = self.columns[1:]
        if s.kind == "location":
            cols[names[0]] = vals[:, 0]
            cols[names[1]] = vals[:, 1]
            rest = names[2:]
        elif s.kind == "categorical":
            assert self.labels is not None
            cols[names[0]] = self.labels[vals]  # code -1 → "" (nothing released, no fallback)
            rest = names[1:]
        else:
            cols[names[0]] = vals
            rest = names[1:]
        for name in rest:
            if name == "epsilon":
                cols[name] = budgets
            elif name == "approximated":
                cols[name] = approx.astype(np.int8)
        pd.DataFrame(cols, copy=False).to_csv(self.fh, header=self.header, index=False, lineterminator="\n")
        self.header = False
