"""Shared parameter groups refuse values the training code cannot use."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.methods.supcl_seq import SupCLSeqParams


def test_views_are_dropout_probabilities_and_may_come_as_commas() -> None:
    assert SupCLSeqParams(views="0.0, 0.1").views == [0.0, 0.1]
    for bad in ("0.1,1.0", [0.1, -0.2]):
        with pytest.raises(ValidationError, match="views"):
            SupCLSeqParams(views=bad)
