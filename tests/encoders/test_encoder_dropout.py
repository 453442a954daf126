"""`Encoder.set_dropout` reaches attention on every code path (issue 42 item 9): SupCL-Seq's views and
Phillips' encoder dropout set the attention-probability dropout too, also where transformers' attention
reads a probability kept as a float since init (BERT's SDPA attention in transformers 4.x:
`BertSdpaSelfAttention.dropout_prob`; many 5.x attention modules: `attention_dropout`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from torch import nn

from harness.encoders.encoder import Encoder, set_dropout_floats

SENTENCES = ["a", "the cat sat on the mat .", "a much longer sentence with many more words in it"]


@pytest.fixture
def no_dropout_bert(two_layer_bert: Path, tmp_path: Path) -> Path:
    """The two-layer BERT with every dropout 0 at init: a probability read from init is then 0."""
    folder = tmp_path / "bert"
    shutil.copytree(two_layer_bert, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _attention_only(encoder: Encoder, probability: float) -> None:
    """Every dropout to `probability` as the views set it, then every dropout but attention's back to 0."""
    encoder.set_dropout(probability)
    attention = {id(layer.attention.self.dropout) for layer in encoder.model.encoder.layer}
    for module in encoder.model.modules():
        if isinstance(module, nn.Dropout) and id(module) not in attention:
            module.p = 0.0


@pytest.mark.parametrize("packing", [True, False])  # the harness's padding-free forward; transformers' own
def test_attention_dropout_set_after_init_changes_the_passes(no_dropout_bert: Path, packing: bool) -> None:
    encoder = Encoder(str(no_dropout_bert), "mean", 32).train()
    encoder.packing = packing
    inputs = encoder.tokenize(SENTENCES)
    with torch.no_grad():
        _attention_only(encoder, 0.0)
        assert torch.equal(encoder(inputs), encoder(inputs))  # no dropout anywhere: one answer
        _attention_only(encoder, 0.9)
        first, second = encoder(inputs), encoder(inputs)
    # with transformers 4.57 and `packing` off, BERT's SDPA attention kept its init 0.0: equal passes
    assert (first - second).abs().max() > 1e-3


def test_float_probabilities_of_attention_modules_are_set() -> None:
    """Attention modules that keep their probability as a number (transformers 4.x SDPA: `dropout_prob`;
    5.x: `attention_dropout`, `dropout`) get the views' probability; modules and flags are left alone."""

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.dropout_prob, self.attention_dropout, self.dropout = 0.1, 0, 0.1
            self.attn_dropout = nn.Dropout(0.1)
            self.is_causal = False

    module = Attention()
    set_dropout_floats(module, 0.3)
    assert (module.dropout_prob, module.attention_dropout, module.dropout) == (0.3, 0.3, 0.3)
    assert module.attn_dropout.p == 0.1 and module.is_causal is False  # nn.Dropout: set by its own branch
