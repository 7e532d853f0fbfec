"""Privacy settings shared by the GUI, the command and the project file (DESIGN §3, §4)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .schemes import SCHEMES

#: Derived from the scheme registry (:mod:`.schemes`), in display order. Schemes added later (Balanced, issue
#: 12) come last, so the positions of the others in tables, CSV files and JSON lists do not move for readers.
ALL_SCHEMES: tuple[str, ...] = tuple(SCHEMES)
#: Schemes that satisfy landmark privacy, and the baselines (DESIGN §4).
LANDMARK_SCHEMES: tuple[str, ...] = tuple(s.name for s in SCHEMES.values() if s.landmark_private)
BASELINES: tuple[str, ...] = tuple(s.name for s in SCHEMES.values() if not s.landmark_private)
#: Scheme → its label, landmark-private schemes first (the order the window lists them in)
SCHEME_LABELS: dict[str, str] = {s.name: s.label for s in sorted(SCHEMES.values(), key=lambda s: not s.landmark_private)}


@dataclass(frozen=True)
class AdaptiveParams:
    """Sampling-rate adaptation of the Adaptive scheme: +inc when the data moves, −dec otherwise."""

    inc: float = 0.1
    dec: float = 0.1
    min_rate: float = 0.1

    def validate(self) -> None:
        for name in ("inc", "dec"):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"adaptive {name} must be in [0, 1], got {v}")
        if not (math.isfinite(self.min_rate) and 0.0 < self.min_rate <= 1.0):
            raise ValueError(f"adaptive minimum rate must be in (0, 1], got {self.min_rate}")


@dataclass(frozen=True)
class PrivacySettings:
    epsilon: float = 1.0
    sensitivity: float = 1.0  # numeric: Δ in the data's units
    bounds: tuple[float, float] | None = None  # numeric: public clamp bounds [lo, hi]
    radius_m: float = 100.0  # location: protection radius r in metres
    categories: tuple[str, ...] | None = None  # categorical: public category list (None = from the data)
    adaptive: AdaptiveParams = field(default_factory=AdaptiveParams)
    # Post-processing (issue 12): previews and exports also give the denoised release. It uses only the
    # release and public settings, so it changes no budget and no guarantee.
    denoise: bool = True
    # numeric: the bounds are the data's own minimum and maximum ("From data", --bounds-from-data): a release
    # publishes them, so its sidecar and statement say so (issue 42, finding 7). Meaningless without bounds.
    bounds_from_data: bool = False
    # numeric: a public lower bound alone (issue 44), e.g. 0 for "values cannot be negative": a fact the user
    # asserts, never derived from the data. The mechanism clamps its input to it and the denoised release is
    # clipped to it; Δ is unchanged (a one-sided bound has no width). Kept apart from ``bounds`` so that every
    # reader of ``bounds`` keeps two finite ends (their midpoint and width are used). Use either, not both.
    lower_bound: float | None = None

    def validate(self) -> None:
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon must be a positive number, got {self.epsilon}")
        if not (math.isfinite(self.sensitivity) and self.sensitivity > 0):
            raise ValueError(f"sensitivity must be a positive number, got {self.sensitivity}")
        if not (math.isfinite(self.radius_m) and self.radius_m > 0):
            raise ValueError(f"radius must be a positive number of metres, got {self.radius_m}")
        if self.bounds is not None:
            lo, hi = self.bounds
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ValueError(f"bounds must be two finite numbers lo < hi, got {self.bounds}")
        if self.lower_bound is not None:
            if not math.isfinite(self.lower_bound):
                raise ValueError(f"the lower bound must be a finite number, got {self.lower_bound}")
            if self.bounds is not None:
                raise ValueError("set either bounds (both ends) or a lower bound alone, not both")
        if self.categories is not None:
            if len(self.categories) < 1:
                raise ValueError("the category list is empty")
            if len(set(self.categories)) != len(self.categories):
                raise ValueError("the category list has repeated entries")
        self.adaptive.validate()

    def clip_range(self) -> tuple[float, float] | None:
        """The public range every value is clamped to: ``bounds``, or ``(lower_bound, +inf)``; None when
        there is neither."""
        if self.bounds is not None:
            return self.bounds
        return None if self.lower_bound is None else (float(self.lower_bound), math.inf)

    def with_(self, **changes: Any) -> PrivacySettings:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["bounds"] = list(self.bounds) if self.bounds is not None else None
        d["categories"] = list(self.categories) if self.categories is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PrivacySettings:
        ad = d.get("adaptive") or {}
        bounds = d.get("bounds")
        cats = d.get("categories")
        s = cls(
            epsilon=float(d.get("epsilon", 1.0)),
            sensitivity=float(d.get("sensitivity", 1.0)),
            bounds=(float(bounds[0]), float(bounds[1])) if bounds else None,
            radius_m=float(d.get("radius_m", 100.0)),
            categories=tuple(str(c) for c in cats) if cats else None,
            adaptive=AdaptiveParams(
                inc=float(ad.get("inc", 0.1)),
                dec=float(ad.get("dec", 0.1)),
                min_rate=float(ad.get("min_rate", 0.1)),
            ),
            denoise=bool(d.get("denoise", True)),  # projects saved before issue 12: on, the default
            bounds_from_data=bool(d.get("bounds_from_data", False)) and bool(bounds),
            lower_bound=None if d.get("lower_bound") is None else float(d["lower_bound"]),
        )
        s.validate()
        return s


def categories_from_data(kind: str, settings: PrivacySettings) -> bool:
    """True when a release of a series of this ``kind`` would publish the data's own category list: a
    categorical series without a public list (``settings.categories``). The list is written whole — every
    label that occurs, even once — and randomized response can output any of them, so the list leaks through
    the release too (issue 17, finding 5). The command and the export dialog publish it only when told to."""
    return kind == "categorical" and settings.categories is None


def categories_from_data_risk(n_labels: int) -> str:
    """The one sentence both the command and the dialog use to say what publishing the list means."""
    return (f"the category list ({n_labels} label{'s' if n_labels != 1 else ''}) would come from the data and "
            "be published whole, including labels that occur only once")


def bounds_from_data_risk(bounds: tuple[float, float] | None) -> str:
    """The one sentence the command and the export dialog use to say what bounds taken from the data mean."""
    shown = f" [{bounds[0]:g}, {bounds[1]:g}]" if bounds is not None else ""
    return (f"the public bounds{shown} are the data's own minimum and maximum: the release's metadata publishes "
            "them, and so reveals those two values exactly")


#: The question the settings dock and the export dialog ask for an all-non-negative numeric series (issue 44):
#: the user decides; nothing is derived from the data.
NONNEGATIVE_QUESTION = "values cannot be negative (public): lower bound 0"


def lower_bound_question(kind: str, values: Any, settings: PrivacySettings) -> bool:
    """True when a numeric series whose values are all ≥ 0 has no public lower bound yet: then the dock, the
    export dialog and ``lmdk export`` ask whether 0 is a public lower bound. Asking shows only what the user
    already sees (their own data); the answer is theirs, and a bound they give is public, not from the data."""
    if kind != "numeric" or settings.lower_bound is not None or settings.bounds is not None:
        return False
    import numpy as np  # (settings stays importable without numpy for the project file readers)

    v = np.asarray(values, dtype=np.float64)
    return bool(v.size) and bool(np.all(v >= 0.0))


def sensitivity_warning(sensitivity: float, bounds: tuple[float, float] | None, unit: str = "") -> str | None:
    """What Δ leaves unprotected when it is smaller than the public bounds' width (issue 14): the same words
    in the settings panel and on ``lmdk export``'s stderr; None when Δ covers the bounds (or there are none)."""
    if bounds is None:
        return None
    width = float(bounds[1]) - float(bounds[0])
    if not (width > 0 and sensitivity < width * (1 - 1e-9)):
        return None
    u = f" {unit}" if unit else ""
    return (f"Δ = {sensitivity:g}{u} is smaller than the bounds' width {width:g}{u}: only changes of at most "
            f"{sensitivity:g}{u} in one event are protected, not any value within the bounds")

