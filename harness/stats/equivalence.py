"""How large a difference is against the paper's: its size judged beside its direction (docs/statistics.md).

- Size: where the paper's own value (a claim's difference, or a cell's score) lies against the harness's
  95% interval of the same quantity: `as the paper` inside it, `below the paper` when the paper's value is
  above the interval (the harness finds less), `above the paper` when it is below it.
- Equivalence, for "reproduced": two one-sided tests (Schuirmann 1987; Wellek 2010, ch. 2) of
  |harness - paper| < margin, each at level alpha, over the same bootstrap resamples as the interval: with
  d_b = resample_b - paper, p_low = share of d_b <= -margin, p_high = share of d_b >= margin, and
  p_TOST = max(p_low, p_high); equivalent (reproduced) when p_TOST <= alpha, which is the (1 - 2 alpha)
  percentile interval of d lying inside (-margin, margin) up to ties. The paper's value counts as a
  constant: the papers give no interval of their own.
- The margin is stated, never inferred from the runs: `equivalence_margin` in a report spec (one number,
  or per metric), by default `DEFAULT_MARGIN` points on the harness's x100 scales (0.02 on the CS224N
  scores, which the papers and the harness keep as fractions: harness.evaluate.cs224n_scores): the
  seed-to-seed spread of unsupervised SimCSE's STS Spearman, "a deviation of about 2% in spearman"
  across seeds of the authors' own script (princeton-nlp/SimCSE issue #63; none of the five papers
  reports its own seed spread), so a harness number counts as the paper's when it is provably closer to
  it than a reseed would move it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.stats.compare import ALPHA

DEFAULT_MARGIN = 2.0
# the CS224N scores are fractions (0-1), every other score x 100: a margin in points is a hundredth there
FRACTION_SCORES = ("sst.acc", "quora.acc", "sts.pearson", "overall", "overall_r01")


def on_fraction_scale(metric: str) -> bool:
    """Whether `metric` is a CS224N fraction (`dev.sst.acc`, `train_set.overall_r01`, ...)."""
    return any(metric.endswith(f".{score}") for score in FRACTION_SCORES)


AS_PAPER, BELOW_PAPER, ABOVE_PAPER = "as the paper", "below the paper", "above the paper"


def size(paper: float, low: float, high: float) -> str:
    """Where the harness's interval [low, high] stands to the paper's value of the same quantity."""
    if paper > high:
        return BELOW_PAPER
    if paper < low:
        return ABOVE_PAPER
    return AS_PAPER


@dataclass(frozen=True)
class Equivalence:
    """TOST of the harness's resampled value against the paper's, within +-margin."""

    margin: float
    p: float
    equivalent: bool

    @classmethod
    def of(cls, resampled: np.ndarray, paper: float, margin: float, alpha: float = ALPHA) -> Equivalence:
        """Two one-sided bootstrap tests (module docstring); NaN p (never equivalent) where a resample is
        undefined."""
        if margin <= 0:
            raise ValueError(f"an equivalence margin is positive, got {margin}")
        shifted = np.asarray(resampled, dtype=float) - paper
        if not np.all(np.isfinite(shifted)):
            return cls(margin, float("nan"), False)
        p = max(float(np.mean(shifted <= -margin)), float(np.mean(shifted >= margin)))
        return cls(margin, p, p <= alpha)


@dataclass(frozen=True)
class Margins:
    """The stated equivalence margins of a report: one for every metric, or per metric."""

    default: float = DEFAULT_MARGIN
    per_metric: tuple[tuple[str, float], ...] = ()

    def of(self, metric: str) -> float:
        """The metric's own margin, else the default in the metric's units (a hundredth for a fraction)."""
        stated = dict(self.per_metric)
        if metric in stated:
            return stated[metric]
        return self.default / 100 if on_fraction_scale(metric) else self.default

    def stated(self, pm: str = "+-") -> str:
        """The margins in words: "+-2 points" (and the metrics with others); `pm` the sign as written
        (LaTeX: "$\\pm$")."""
        text = f"{pm}{self.default:g} points ({pm}{self.default / 100:g} on the CS224N fractions)"
        others = ", ".join(f"{m} {pm}{v:g}" for m, v in self.per_metric)
        return f"{text} ({others})" if others else text
