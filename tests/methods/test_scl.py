"""The mixed objective L = (1 - lambda) L_CE + lambda L_SCL, including its lambda = 0 and 1 ends."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from harness.data.nli import NLIGroup, read_snli_local
from harness.encoders.encoder import Encoder
from harness.errors import HarnessError
from harness.methods.sbert import SBERTBaseline, SBERTParams
from harness.methods.scl import SCLParams, SupervisedContrastiveNLI
from harness.networks.nli import NLIModel
from harness.resolve.run_spec import resolve_run


@pytest.fixture(scope="module")
def batch(data_dir: Path) -> list:
    return read_snli_local(data_dir, ["dev"])[:6]


def build(tiny_bert: Path, **params: object) -> NLIModel:
    torch.manual_seed(0)
    model = SupervisedContrastiveNLI.build(Encoder(str(tiny_bert)), SCLParams(**params), ())
    return model.eval()  # no dropout: two calls see the same embeddings


def test_lambda_zero_is_cross_entropy_only(tiny_bert: Path, batch: list) -> None:
    parts = build(tiny_bert, **{"lambda": 0.0}).loss(batch)
    assert "loss_scl" not in parts
    assert torch.equal(parts["loss"], parts["loss_ce"])


def test_lambda_one_is_contrastive_only(tiny_bert: Path, batch: list) -> None:
    parts = build(tiny_bert, **{"lambda": 1.0}).loss(batch)
    assert "loss_ce" not in parts
    assert torch.equal(parts["loss"], parts["loss_scl"])


def test_lambda_interpolates(tiny_bert: Path, batch: list) -> None:
    parts = build(tiny_bert, **{"lambda": 0.3, "tau": 0.5}).loss(batch)
    expected = 0.7 * parts["loss_ce"] + 0.3 * parts["loss_scl"]
    assert torch.allclose(parts["loss"], expected)
    ce_only = build(tiny_bert, **{"lambda": 0.0}).loss(batch)
    assert torch.allclose(parts["loss_ce"], ce_only["loss_ce"])


def test_sbert_is_scl_at_lambda_zero(tiny_bert: Path, batch: list) -> None:
    torch.manual_seed(0)
    sbert = SBERTBaseline.build(Encoder(str(tiny_bert)), SBERTParams(), ()).eval()
    assert torch.allclose(sbert.loss(batch)["loss"], build(tiny_bert, **{"lambda": 0.0}).loss(batch)["loss"])


def test_params_validate() -> None:
    with pytest.raises(ValueError, match="lambda"):
        SCLParams(**{"lambda": 1.5})
    with pytest.raises(ValueError, match="selection"):
        SCLParams(selection="three")


# Liao's Augment baselines: the classifier's cross-entropy over the pairs L_SCL would compare.
E, N, C = 0, 1, 2  # entailment, neutral, contradiction (LABELS)
AUGMENT_BATCH = [
    NLIGroup("p0", ("h0", "h1", "h2", "h3"), (0, 0, 1, 2)),  # candidates 0-3: two entailments
    NLIGroup("p1", ("h4", "h5", "h6"), (2, 0, 1)),  # candidates 4-6
    NLIGroup("p2", ("h7", "h8"), (1, 2)),  # candidates 7-8: no entailment, so no anchor
]
# selection 2p3n, draw first, one anchor per entailment row: (premise, candidate, label) by hand
AUGMENT_PAIRS = [
    *[(0, 0, E), (0, 1, E), (0, 2, N), (0, 3, C), (0, 4, C)],  # row 0: itself + h1; own n/c, then h4
    *[(0, 1, E), (0, 0, E), (0, 2, N), (0, 3, C), (0, 4, C)],  # row 1: the same sets
    *[(1, 5, E), (1, 4, C), (1, 6, N), (1, 0, C)],  # row 5: own c/n (their own labels), then h0
]


def test_augment_is_cross_entropy_over_the_selected_pairs(tiny_bert: Path) -> None:
    method = build(tiny_bert, **{"lambda": 0.5, "contrastive_term": "augment", "selection": "2p3n",
                                 "draw": "first"})  # fmt: skip
    parts = method.loss(AUGMENT_BATCH)
    assert "loss_scl" not in parts
    sentences = [f"p{i}" for i in range(3)] + [f"h{i}" for i in range(9)]
    with torch.no_grad():
        embeddings = method.encoder.embed(sentences)
        premises, hypotheses = embeddings[:3], embeddings[3:]
        logits = method.classifier(
            premises[[p for p, _, _ in AUGMENT_PAIRS]], hypotheses[[h for _, h, _ in AUGMENT_PAIRS]]
        )
        expected = F.cross_entropy(logits.float(), torch.tensor([y for _, _, y in AUGMENT_PAIRS]))
    assert torch.allclose(parts["loss_aug"], expected, atol=1e-6)
    assert torch.allclose(parts["loss"], 0.5 * parts["loss_ce"] + 0.5 * parts["loss_aug"])


def test_augment_refuses_the_contrastive_fields() -> None:
    for field, value in (("tau", 0.5), ("normalize", True)):
        with pytest.raises(ValueError, match=f"'{field}' is not read with contrastive_term: augment"):
            SCLParams(**{"contrastive_term": "augment", field: value})
        with pytest.raises(HarnessError, match=f"^config: '{field}' is not read .*; remove it$"):
            resolve_run({"method": "scl", "contrastive_term": "augment", field: value})
    assert SCLParams(contrastive_term="augment", selection="3p3n").contrastive_term == "augment"
