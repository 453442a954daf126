"""`glove`: no training; Liao's "Avg. GloVe embeddings", a sentence as the mean of its GloVe vectors.

Liao Table 2 caption: "the average GloVe word embeddings for all tokens in a sentence" (Tables 2-3);
formula, tokens and the SentEval convention in harness/encoders/glove.py. Scored by the `sts` scorer
like any embedding: STS-B dev, then the STS tests and the `eval_suite`'s transfer tasks.

No transformer is loaded (`needs_encoder = False`; the run's `model` field is not read). The vectors
are not shipped: `glove_path`, else the environment's HARNESS_GLOVE_PATH (which leaves the study's YAML,
and so its resume, unchanged). Without either, or when the file is missing, the trial is skipped: its
MLflow run ends KILLED with the notice, the Optuna trial FAIL with a `skipped` note, and the study goes
on; once the file is given, `harness run-study STUDY --retry-failed` runs it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field

from harness.errors import TrialSkipped
from harness.fields import Strict
from harness.methods.base import DataSources, Method
from harness.registry import register_method

GLOVE_URL = "https://nlp.stanford.edu/projects/glove/"
GLOVE_ENV = "HARNESS_GLOVE_PATH"


class GloveParams(Strict):
    glove_path: str | None = Field(
        None,
        description="GloVe vectors as text (`word v1 ... vd` a line, .gz allowed), e.g. glove.840B.300d.txt",
    )


def vectors_file(glove_path: str | None) -> Path:
    """The vectors file (`glove_path`, else $HARNESS_GLOVE_PATH), or TrialSkipped with the one-line notice
    of what to give."""
    fix = (
        f"set glove_path: /path/glove.840B.300d.txt or HARNESS_GLOVE_PATH ({GLOVE_URL}), then re-run the "
        "study with --retry-failed"
    )
    glove_path = glove_path or os.environ.get(GLOVE_ENV) or None
    if glove_path is None:
        raise TrialSkipped(f"glove: no vectors file; {fix}")
    path = Path(glove_path).expanduser()
    if not path.is_file():
        raise TrialSkipped(f"glove: vectors file {path} not found; {fix}")
    return path


@register_method("glove")
class AverageGlove(Method):
    Params = GloveParams
    needs_encoder = False
    trains = False
    model = "glove"

    @classmethod
    def needs(cls, run: Any, sources: DataSources) -> list[str]:
        try:
            vectors_file(run.params.glove_path)
        except TrialSkipped:
            return [
                f"GloVe vectors (glove_path or {GLOVE_ENV}; {GLOVE_URL}); without them the trial is skipped"
            ]
        return []

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> list[Any]:
        return []
