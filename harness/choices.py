"""Names offered in several places (run fields, CLI options, the code that acts on them), defined once.
No heavy imports here, so the command line can build its options without loading torch."""

from __future__ import annotations

from typing import Literal, get_args

Pooling = Literal["model", "cls", "cls_before_pooler", "mean", "mean_no_cls", "first_last_avg"]
Precision = Literal["auto", "fp32", "bf16", "fp16"]
TextVariant = Literal["senteval", "raw"]
# heads (harness.encoders.heads), projections (harness.encoders.projection_head), Liao's L_SCL
# (losses.nli_supcon)
NLIHead = Literal["two_linear", "linear", "mlp"]
ParaphraseHead = Literal["linear", "bilinear", "cosine", "plain_cosine"]
SimilarityHead = Literal["cosine", "relu_cosine", "linear"]
Projection = Literal["simcse", "simclr"]
Anchors = Literal["entailment_row", "premise"]
Draw = Literal["random", "first"]
NLIBatches = Literal["file_order", "premise_groups"]

POOLINGS: tuple[str, ...] = get_args(Pooling)
PRECISIONS: tuple[str, ...] = get_args(Precision)
TEXT_VARIANTS: tuple[str, ...] = get_args(TextVariant)

# SentEval's transfer presets: the number of cross-validation folds (senteval.py "prototyping" / "default").
TRANSFER_FOLDS: dict[str, int] = {"prototyping": 5, "default": 10}

# The report's bootstrap (harness.stats.resample): resamples B per interval and the fixed seed that makes
# reports reproducible. B: on the demo's 32 cells the interval ends move by 0.027 points on average between
# two bootstrap seeds at 4000 (95th percentile 0.070, max 0.110; every end within 0.05 needs B near 20,000,
# 5x the cost of a trial's saved resamples); bench/report_statistics.py, docs/statistics.md.
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 1234
