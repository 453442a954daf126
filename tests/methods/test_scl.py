"""The mixed objective L = (1 - lambda) L_CE + lambda L_SCL, including its lambda = 0 and 1 ends."""

from pathlib import Path

import pytest
import torch

from harness.data.nli import read_snli_local
from harness.methods.sbert import SBERTBaseline, SBERTParams
from harness.methods.scl import SCLParams, SupervisedContrastiveNLI
from harness.model.encoder import Encoder


@pytest.fixture(scope="module")
def batch(data_dir: Path) -> list:
    return read_snli_local(data_dir, ["dev"])[:6]


def build(tiny_bert: Path, **params: object) -> SupervisedContrastiveNLI:
    torch.manual_seed(0)
    method = SupervisedContrastiveNLI(Encoder(str(tiny_bert)), SCLParams(**params))
    return method.eval()  # no dropout: two calls see the same embeddings


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
    sbert = SBERTBaseline(Encoder(str(tiny_bert)), SBERTParams()).eval()
    assert torch.allclose(sbert.loss(batch)["loss"], build(tiny_bert, **{"lambda": 0.0}).loss(batch)["loss"])


def test_params_validate() -> None:
    with pytest.raises(ValueError, match="lambda"):
        SCLParams(**{"lambda": 1.5})
    with pytest.raises(ValueError, match="selection"):
        SCLParams(selection="three")
