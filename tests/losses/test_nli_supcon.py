"""Liao's SCL loss (eq. 2) against values computed by hand, and the selection caps."""

import math

import pytest
import torch

from harness.losses import nli_supervised_contrastive, parse_selection

R = 1 / math.sqrt(2)
ANCHORS = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
# h0: premise 0, entailment; h1: premise 0, contradiction; h2: premise 1, entailment.
CANDIDATES = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
OWNER = torch.tensor([0, 0, 1])
POSITIVE = torch.tensor([True, False, True])


def nll(target: float, *others: float) -> float:
    return -math.log(math.exp(target) / (math.exp(target) + sum(math.exp(o) for o in others)))


def scl(**kwargs: object) -> float:
    return float(nli_supervised_contrastive(ANCHORS, CANDIDATES, OWNER, POSITIVE, **kwargs))


def test_all_positives_all_negatives_by_hand() -> None:
    # cosines: anchor 0 -> (1, 0, R); anchor 1 -> (0, 1, R)
    anchor0 = nll(1.0, 0.0, R)  # positive h0; own contradiction h1; other premise's h2
    anchor1 = nll(R, 0.0, 1.0)  # positive h2; other premise's h0, h1
    assert scl(temperature=1.0, normalize=True) == pytest.approx((anchor0 + anchor1) / 2, abs=1e-6)


def test_temperature_divides_similarities() -> None:
    tau = 0.5
    anchor0 = nll(1 / tau, 0.0, R / tau)
    anchor1 = nll(R / tau, 0.0, 1 / tau)
    assert scl(temperature=tau, normalize=True) == pytest.approx((anchor0 + anchor1) / 2, abs=1e-6)


def test_negative_cap_prefers_own_hard_negatives() -> None:
    anchor0 = nll(1.0, 0.0)  # one negative: its own contradiction h1, not h2
    anchor1 = nll(R, 1.0 * 0)  # no own negatives: the first other hypothesis h0 (cosine 0)
    assert scl(temperature=1.0, max_negatives=1, normalize=True) == pytest.approx(
        (anchor0 + anchor1) / 2, abs=1e-6
    )


def test_by_default_liaos_raw_dot_product_over_tau() -> None:
    # Liao eq. 2: s_ij = phi_i . phi_j / tau, no normalisation; dot products: anchor 0 -> (1, 0, 1),
    # anchor 1 -> (0, 1, 1)
    tau = 0.5
    anchor0 = nll(1.0 / tau, 0.0, 1.0 / tau)
    anchor1 = nll(1.0 / tau, 0.0, 1.0 / tau)
    assert scl(temperature=tau) == pytest.approx((anchor0 + anchor1) / 2, abs=1e-6)


def test_positive_cap_and_anchors_without_positives() -> None:
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    candidates = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    owner = torch.tensor([0, 0, 1])
    positive = torch.tensor([True, True, False])  # premise 0 has two positives, premise 1 none
    full = nll(1.0, 0.0, 0.0) / 2 + nll(0.0, 1.0, 0.0) / 2  # mean over anchor 0's two positives
    capped = nll(1.0, 0.0)  # only the first positive h0 and the one negative h2
    assert float(nli_supervised_contrastive(anchors, candidates, owner, positive, 1.0)) == pytest.approx(full)
    got = nli_supervised_contrastive(anchors, candidates, owner, positive, 1.0, max_positives=1)
    assert float(got) == pytest.approx(capped)


def test_gradient_flows_and_is_finite() -> None:
    anchors = ANCHORS.clone().requires_grad_(True)
    loss = nli_supervised_contrastive(anchors, CANDIDATES, OWNER, POSITIVE, 0.1)
    loss.backward()
    assert torch.isfinite(anchors.grad).all() and anchors.grad.abs().sum() > 0


@pytest.mark.parametrize(
    ("name", "caps"),
    [("3p3n", (3, 3)), ("3palln", (3, None)), ("allpalln", (None, None)), ("1p10n", (1, 10))],
)
def test_parse_selection(name: str, caps: tuple[int | None, int | None]) -> None:
    assert parse_selection(name) == caps


def test_parse_selection_rejects_typos() -> None:
    with pytest.raises(ValueError, match="allpalln"):
        parse_selection("all-p-all-n")
