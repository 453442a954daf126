"""SimCSE's projection (issue 9 rows 9-10): an MLP over the raw [CLS] state (no BERT pooler underneath),
used in training only unless `mlp_at_test`; Chen's 2-layer variant."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness.encoders.encoder import Encoder
from harness.encoders.projection_head import ProjectedEncoder, projection_head
from harness.errors import HarnessError
from harness.evaluate.suite import SentenceEncoder
from harness.resolve.run_spec import resolve_run
from harness.resolve.study_spec import load_study
from harness.stages.contrastive import simcse_loss
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from tests.helpers import child_runs, tiny_study

SENTENCES = ["a man is playing a guitar .", "the cat sleeps", "stocks fell sharply on monday", "hello"]


def simcse_run(tiny_bert: Path, **fields: object):
    flat = {"method": "unsup_simcse", "model": str(tiny_bert), "pooling": "cls_before_pooler", **fields}
    run = resolve_run(flat)
    torch.manual_seed(0)
    method = run.build(Encoder(str(tiny_bert), run.settings.pooling, 32))
    return run, method.eval()


def test_projection_kinds() -> None:
    assert [type(m) for m in projection_head(8, "simcse")] == [nn.Linear, nn.Tanh]
    assert [type(m) for m in projection_head(8, "simclr")] == [nn.Linear, nn.ReLU, nn.Linear]


def test_unsup_loss_is_infonce_over_the_mlp_of_the_raw_cls_state(tiny_bert: Path) -> None:
    _, method = simcse_run(tiny_bert)
    tau = 0.05
    with torch.no_grad():
        loss = simcse_loss(method.context(), SENTENCES, tau)["loss"]
        tokens = method.encoder.tokenize(SENTENCES)
        out = method.encoder.model(**tokens)
        cls = out.last_hidden_state[:, 0]  # the raw [CLS] state (models.py:68), not pooler_output
        linear = method.projection[0]
        z = torch.tanh(cls @ linear.weight.T + linear.bias)  # MLPLayer: dense + tanh
        # eval mode: the two passes agree; l_i = -log e^{cos(z_i,z_i)/tau} / sum_j e^{cos(z_i,z_j)/tau}
        cos = F.normalize(z, dim=-1) @ F.normalize(z, dim=-1).T / tau
        expected = -(cos.diagonal() - cos.logsumexp(dim=1)).mean()
        embedded = method.encoder.embed(SENTENCES)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert torch.allclose(embedded, cls, atol=1e-5)  # what the MLP sees is the raw [CLS] state ...
    assert not torch.allclose(embedded, out.pooler_output, atol=1e-2)  # ... not BERT's pooler


def test_mlp_at_test_evaluates_the_projected_embedding(tiny_bert: Path) -> None:
    _, plain = simcse_run(tiny_bert)
    assert plain.eval_encoder() is plain.encoder  # unsupervised SimCSE: training only
    _, kept = simcse_run(tiny_bert, mlp_at_test=True)
    embedder = kept.eval_encoder()
    assert isinstance(embedder, ProjectedEncoder)
    vectors = SentenceEncoder(embedder)(SENTENCES)
    with torch.no_grad():
        expected = kept.projection(kept.encoder.embed(SENTENCES))
    got = torch.from_numpy(np.stack([vectors[s] for s in SENTENCES]))
    assert torch.allclose(got, expected, atol=1e-5)
    assert not kept.training and not kept.projection.training  # the evaluation left the mode it found
    # the cache key covers the projection: the projected and the bare embeddings never share an entry
    assert SentenceEncoder(embedder).key() != SentenceEncoder(kept.encoder).key()


def test_chens_projection_has_two_layers(tiny_bert: Path) -> None:
    _, method = simcse_run(tiny_bert, projection="simclr")
    assert [type(m) for m in method.projection] == [nn.Linear, nn.ReLU, nn.Linear]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"method": "unsup_simcse", "mlp_projection": False, "mlp_at_test": True},
            "'mlp_at_test' is not read",
        ),
        (
            {"method": "unsup_simcse", "mlp_projection": False, "projection": "simclr"},
            "'projection' is not read",
        ),
        (
            {"method": "contrastive_first", "mlp_at_test": True},
            "'mlp_at_test' applies to runs scored on their embeddings",
        ),
    ],
)
def test_impossible_projection_settings_are_refused(fields: dict, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        resolve_run(fields)


@pytest.mark.slow
def test_a_trial_scores_sts_with_or_without_the_projection(tmp_path: Path, tiny_bert: Path) -> None:
    """Same seed, same training; only the evaluated embedding differs."""
    path = tiny_study(tmp_path, tiny_bert, {"mlp_at_test": [False, True]}, name="mlp-at-test",
                      method="unsup_simcse", contrastive_data=["sts"], contrastive_limit=64,
                      pooling="cls_before_pooler", max_steps=2)  # fmt: skip
    run_study(load_study(path), progress=False)
    runs = {r.data.params["mlp_at_test"]: r for r in child_runs("mlp-at-test")}
    assert {r.info.status for r in runs.values()} == {"FINISHED"}
    assert (
        metrics_of(runs["True"])["STSBenchmark.spearman"]
        != metrics_of(runs["False"])["STSBenchmark.spearman"]
    )
    assert metrics_of(runs["True"])["train.loss"] == metrics_of(runs["False"])["train.loss"]
