"""What the model tests share: the tokenizers whose padding the harness must reproduce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from transformers import AutoTokenizer

from harness.encoders.location import resolve_model_name


@pytest.fixture(params=[("bert", "right"), ("bert", "left"), ("all-MiniLM-L6-v2", "right"),
                        ("all-MiniLM-L6-v2", "left")], ids=lambda p: "-".join(p))  # fmt: skip
def tokenizer(request: pytest.FixtureRequest, tiny_bert: Path) -> Any:
    """The tests' BERT tokenizer and all-MiniLM-L6-v2's, each padding right and left."""
    model, side = request.param
    loaded = AutoTokenizer.from_pretrained(tiny_bert if model == "bert" else resolve_model_name(model))
    loaded.padding_side = side
    return loaded
