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


BY_PREMISE = {"anchor_per": "premise", "draw": "first"}  # one anchor per premise, caps in batch order


def nll(target: float, *others: float) -> float:
    return -math.log(math.exp(target) / (math.exp(target) + sum(math.exp(o) for o in others)))


def scl(**kwargs: object) -> float:
    return float(nli_supervised_contrastive(ANCHORS, CANDIDATES, OWNER, POSITIVE, **BY_PREMISE, **kwargs))


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
    assert float(nli_supervised_contrastive(anchors, candidates, owner, positive, 1.0, **BY_PREMISE)) == (
        pytest.approx(full)
    )
    got = nli_supervised_contrastive(anchors, candidates, owner, positive, 1.0, max_positives=1, **BY_PREMISE)
    assert float(got) == pytest.approx(capped)


def test_gradient_flows_and_is_finite() -> None:
    anchors = ANCHORS.clone().requires_grad_(True)
    loss = nli_supervised_contrastive(anchors, CANDIDATES, OWNER, POSITIVE, 0.1, **BY_PREMISE)
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


# premise 0: h0 entailment, h1 entailment, h2 contradiction; premise 1: h3 entailment, h4 neutral
ROW_ANCHORS = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
ROW_CANDIDATES = torch.tensor([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.0, 2.0], [1.0, 1.0]])
ROW_OWNER = torch.tensor([0, 0, 0, 1, 1])
ROW_POSITIVE = torch.tensor([True, True, False, True, False])


def authors_loop(n_pos: int | None, n_neg: int | None, pick=lambda options, k: options[:k]) -> float:
    """Danqi7/584-final@994712c bert_sent_embed.py:114-168 re-written: for every entailment row, the
    premise as anchor, its own hypothesis plus up to N+ - 1 other entailment hypotheses of the premise
    as positives, N- of the remaining rows as negatives; -sum log softmax over positives / count; the
    mean over the rows."""
    losses = []
    for row in range(len(ROW_OWNER)):
        if not ROW_POSITIVE[row]:
            continue
        premise = int(ROW_OWNER[row])
        entailed = [j for j in range(len(ROW_OWNER)) if ROW_OWNER[j] == premise and ROW_POSITIVE[j]]
        others = [j for j in entailed if j != row]
        positives = [row, *pick(others, len(others) if n_pos is None else n_pos - 1)]
        rest = [j for j in range(len(ROW_OWNER)) if j not in entailed]
        negatives = pick(rest, len(rest) if n_neg is None else n_neg)
        scores = ROW_CANDIDATES[positives + negatives] @ ROW_ANCHORS[premise]
        losses.append(float(-torch.log_softmax(scores, dim=0)[: len(positives)].sum() / len(positives)))
    return sum(losses) / len(losses)


def row_scl(**kwargs: object) -> float:
    kwargs.setdefault("draw", "first")  # no cap: the draw does not matter
    return float(nli_supervised_contrastive(ROW_ANCHORS, ROW_CANDIDATES, ROW_OWNER, ROW_POSITIVE, 1.0,
                                            anchor_per="entailment_row", **kwargs))  # fmt: skip


def test_one_anchor_per_entailment_row_as_the_authors_code() -> None:
    # allpalln: three anchors (rows h0, h1 of premise 0, h3 of premise 1); premise 0 counts twice
    assert row_scl() == pytest.approx(authors_loop(None, None), abs=1e-6)
    by_premise = float(
        nli_supervised_contrastive(ROW_ANCHORS, ROW_CANDIDATES, ROW_OWNER, ROW_POSITIVE, 1.0, **BY_PREMISE)
    )
    assert by_premise != pytest.approx(row_scl(), abs=1e-3)
    # 1p: only the row's own hypothesis is a positive
    assert row_scl(max_positives=1, draw="first") == pytest.approx(authors_loop(1, None), abs=1e-6)


def test_random_draws_pick_uniformly_without_replacement() -> None:
    """1p1n drawn at random: the loss of each anchor is one of its possible (positive, negative) pairs;
    over many draws each negative of premise 1's anchor (h0, h1, h2, h4) comes up about equally."""
    generator = torch.Generator().manual_seed(0)
    candidates = torch.tensor([[0.0, 0.0], [0.0, 0.3], [0.0, 0.6], [0.0, 2.0], [0.0, 1.0]])  # distinct scores
    one_anchor = (ROW_ANCHORS[1:], candidates, torch.tensor([1, 1, 1, 0, 0]),
                  torch.tensor([False, False, False, True, False]))  # fmt: skip
    # the anchor (premise index 0 here) owns h3 (entailment) and h4 (neutral); h0-h2 are another's
    scores = candidates @ ROW_ANCHORS[1]
    by_negative = {j: float(-torch.log_softmax(scores[[3, j]], dim=0)[0]) for j in (0, 1, 2, 4)}
    counts = dict.fromkeys(by_negative, 0)
    for _ in range(2000):
        loss = float(nli_supervised_contrastive(*one_anchor, 1.0, 1, 1, anchor_per="entailment_row",
                                                draw="random", generator=generator))  # fmt: skip
        match = [j for j, value in by_negative.items() if abs(value - loss) < 1e-6]
        assert len(match) == 1
        counts[match[0]] += 1
    assert all(400 < c < 600 for c in counts.values()), counts
