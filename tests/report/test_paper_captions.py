"""Shipped captions say what the papers say, and where a reproduction differs (issue 42): each test reads
the report spec and checks the sentence that states the paper's source or the difference."""

from __future__ import annotations

from harness.report.spec import load_spec


def _caption(study: str, table: str) -> str:
    (part,) = [t for t in load_spec(study).tables if t.name == table]
    return " ".join(part.caption.split())


def test_chen_ensemble_caption_says_the_member_pool_differs_and_why() -> None:
    """Chen Table 2's Ensemble (dev) SST 0.521 and STS 0.761 are no Table 2 model's; the harness's pool is."""
    caption = _caption("chen_ensemble", "ensemble")
    assert "member pool differs" in caption and "chen\\_supervised" in caption
    assert "Table 4's Quora Only" in caption and "0.761" in caption and "best 0.748, Table 9" in caption
    assert '"the models giving the best single-task performance" (4.2' in caption
