"""Debug-decay analysis: how much each further repair attempt adds (PyCapsule's I(x) = a·e^(−b·x)).

Definitions (stated in every report): attempt 0 is the first generation; for attempt x = 1..max,
``effectiveness[x]`` = problems first solved at attempt x / problems still unsolved before attempt x,
and ``share[x]`` = problems first solved at attempt x / all problems. The fit is nonlinear least squares
in the original space (not a log-linear fit, which weights points differently and gives other numbers),
R² = 1 − SS_res / SS_tot in that space, intervals by bootstrapping problems, and a constant-rate
(geometric) alternative for comparison. Five points and two parameters give R² near 1 for almost any
monotone decay, and the fitted ``a`` is an extrapolation to x = 0, not a probability.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from sotacheck.audit.intervals import ConfidenceInterval
from sotacheck.core.errors import ArgumentError

PAPER_MAX_ATTEMPTS = 5  # PyCapsule's cap on repair attempts
DECAY_RESAMPLES = 1_000
"""Problem resamples behind a decay fit's bootstrap intervals: :func:`fit_decay`'s default, and the count of
every fit an analysis carries (:mod:`sotacheck.audit.decay_fits`)."""

EXTRAPOLATION_WARNING = ("The fit describes attempts {lo}..{hi} only: it says nothing about attempts past "
                         "{hi}, and R² near 1 is expected from few points and two parameters.")


@dataclass(frozen=True)
class ExponentialFit:
    a: float
    b: float
    r_squared: float
    sse: float


def _exp(x: np.ndarray, a: float, b: float) -> np.ndarray:
    return a * np.exp(-b * x)


class ConstantCurve(ArgumentError):
    """The curve is constant (up to floating-point rounding): nothing decays, and R² = 1 − SSE/SST is
    undefined because the total sum of squares is zero."""


def is_constant(y: np.ndarray) -> bool:
    """Whether ``y`` is constant up to rounding: its spread within 1e-9 of its largest magnitude (the
    effectiveness 100/1000, 90/900, 81/810 is 0.1 three times, but not bit for bit)."""
    y = np.asarray(y, dtype=float)
    return bool(np.ptp(y) <= 1e-9 * max(float(np.abs(y).max()), np.finfo(float).tiny))


def fit_exponential(x: np.ndarray, y: np.ndarray) -> ExponentialFit:
    """Least-squares fit of y = a·e^(−b·x); R² in the original space. A constant ``y`` is a
    :class:`ConstantCurve` error (R² would divide by a total sum of squares of zero)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.size < 3:
        raise ArgumentError(f"`x` and `y` must have the same shape with at least 3 points, got {x.shape}, {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ArgumentError("`x` and `y` must be finite")
    if is_constant(y):
        raise ConstantCurve(f"the curve is constant ({y[0]:.4g} at every point): there is no decay, and R² is "
                            f"undefined (the total sum of squares is zero)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params, _ = optimize.curve_fit(_exp, x, y, p0=(max(y.max(), 1e-6), 0.5), maxfev=20_000)
    residual = y - _exp(x, *params)
    sse = float(residual @ residual)
    centred = y - y.mean()
    sst = float(centred @ centred)
    r2 = 1 - sse / sst
    return ExponentialFit(float(params[0]), float(params[1]), float(r2), sse)


@dataclass(frozen=True)
class DecayCurve:
    """Per-attempt counts from first-solved attempts."""

    attempts: np.ndarray          # 1..max_attempts
    solved_at: np.ndarray         # problems first solved at each attempt
    unsolved_before: np.ndarray   # problems still unsolved before each attempt
    n_problems: int
    solved_initially: int         # at attempt 0

    @property
    def effectiveness(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.unsolved_before > 0, self.solved_at / np.maximum(self.unsolved_before, 1),
                            np.nan)

    @property
    def share(self) -> np.ndarray:
        return self.solved_at / self.n_problems

    def solved_beyond(self, cap: int) -> int:
        """Problems first solved by a repair attempt after ``cap`` (PyCapsule's paper stops at 5)."""
        return int(self.solved_at[self.attempts > cap].sum())


def decay_curve(first_solved: np.ndarray, max_attempts: int) -> DecayCurve:
    """Counts from each problem's first-solved attempt (0..max_attempts; −1 or NaN = never solved)."""
    if max_attempts < 1:
        raise ArgumentError(f"`max_attempts` must be at least 1, got {max_attempts}")
    attempts_in = np.asarray(first_solved, dtype=float)
    if attempts_in.ndim != 1 or attempts_in.size == 0:
        raise ArgumentError("`first_solved` must be a non-empty 1-D array")
    solved = np.where(np.isnan(attempts_in), -1, attempts_in).astype(int)
    if (solved > max_attempts).any() or (solved < -1).any():
        raise ArgumentError(f"`first_solved` values must be in -1..{max_attempts}")
    attempts = np.arange(1, max_attempts + 1)
    solved_at = np.array([(solved == x).sum() for x in attempts])
    unsolved_before = np.array([((solved == -1) | (solved >= x)).sum() for x in attempts])
    return DecayCurve(attempts, solved_at, unsolved_before, solved.size, int((solved == 0).sum()))


@dataclass(frozen=True)
class DecayResult:
    """The decay fit on the effectiveness curve, its bootstrap intervals and the geometric alternative."""

    curve: DecayCurve
    fit: ExponentialFit
    fitted_attempts: np.ndarray
    constant_rate: float
    constant_rate_sse: float
    aic_exponential: float
    aic_constant: float
    bootstrap: np.ndarray         # resamples × (a, b, r²), rows with failed fits removed
    warning: str

    @property
    def statistic(self) -> float:
        return self.fit.r_squared

    def confidence_interval(self, parameter: str = "r_squared", confidence_level: float = 0.95
                            ) -> ConfidenceInterval:
        """Percentile interval of ``"a"``, ``"b"`` or ``"r_squared"`` over problem resamples."""
        column = {"a": 0, "b": 1, "r_squared": 2}.get(parameter)
        if column is None:
            raise ArgumentError(f"`parameter` must be 'a', 'b' or 'r_squared', got {parameter!r}")
        if self.bootstrap.shape[0] < 10:
            raise ArgumentError(f"only {self.bootstrap.shape[0]} bootstrap fits succeeded; no interval for "
                             f"`{parameter}`")
        tail = (1 - confidence_level) / 2
        low, high = np.quantile(self.bootstrap[:, column], [tail, 1 - tail])
        return ConfidenceInterval(float(low), float(high))

    def interval_note(self, parameter: str = "r_squared", confidence_level: float = 0.95) -> str | None:
        """Why the percentile interval of ``parameter`` does not contain its estimate, when it does not
        (None otherwise). For R² this happens when the fit to the observed problems is better than to
        almost any resample of them: R² of a two-parameter fit to a few points is biased upwards, and the
        resamples show how much; the interval is then a statement about that spread, not a range around
        the estimate."""
        ci = self.confidence_interval(parameter, confidence_level)
        estimate = {"a": self.fit.a, "b": self.fit.b, "r_squared": self.fit.r_squared}[parameter]
        if ci.low <= estimate <= ci.high:
            return None
        side = "above" if estimate > ci.high else "below"
        share = float(np.mean(self.bootstrap[:, {"a": 0, "b": 1, "r_squared": 2}[parameter]] < estimate))
        return (f"The estimate {estimate:.4f} lies {side} its {100 * confidence_level:.0f} % bootstrap interval "
                f"[{ci.low:.4f}, {ci.high:.4f}]: {100 * share:.1f} % of the problem resamples fit worse than the "
                f"observed problems. With few points a two-parameter fit flatters R²; read the interval as the "
                f"spread over resampled problems, and the estimate as optimistic.")


def _aic(sse: float, n: int, k: int) -> float:
    return float(n * np.log(max(sse, 1e-300) / n) + 2 * k)


def fit_decay(first_solved: np.ndarray, max_attempts: int, n_resamples: int = DECAY_RESAMPLES,
              rng: np.random.Generator | int | None = None) -> DecayResult:
    """Fit I(x) = a·e^(−b·x) to the effectiveness of attempts 1..max_attempts.

    Attempts with no unsolved problem left carry no information and are left out of the fit. At least
    three informative attempts are needed; fewer is a ``ValueError`` naming ``first_solved``.
    """
    curve = decay_curve(first_solved, max_attempts)
    informative = curve.unsolved_before > 0
    if curve.solved_at.sum() == 0:
        raise ArgumentError(f"no problem was first solved by a repair attempt (attempts 1..{max_attempts}; "
                         f"{int(curve.unsolved_before[0])} unsolved after the first generation): there is no decay to fit")
    if informative.sum() < 3:
        raise ArgumentError("`first_solved` leaves fewer than 3 attempts with unsolved problems; nothing to fit")
    x = curve.attempts[informative].astype(float)
    y = curve.effectiveness[informative]
    fit = fit_exponential(x, y)
    pooled = float(curve.solved_at[informative].sum() / curve.unsolved_before[informative].sum())
    constant_sse = float(((y - pooled) ** 2).sum())
    generator = np.random.default_rng(rng)
    raw = np.asarray(first_solved, dtype=float)
    rows = []
    for _ in range(n_resamples):
        sample = raw[generator.integers(0, raw.size, raw.size)]
        boot = decay_curve(sample, max_attempts)
        mask = boot.unsolved_before > 0
        if mask.sum() < 3:
            continue
        try:
            f = fit_exponential(boot.attempts[mask].astype(float), boot.effectiveness[mask])
        except (RuntimeError, ValueError):  # a failed fit, or a constant resample (no R²)
            continue
        rows.append((f.a, f.b, f.r_squared))
    warning = EXTRAPOLATION_WARNING.format(lo=int(x.min()), hi=int(x.max()))
    return DecayResult(curve, fit, x, pooled, constant_sse, _aic(fit.sse, x.size, 2),
                       _aic(constant_sse, x.size, 1), np.array(rows).reshape(-1, 3), warning)
