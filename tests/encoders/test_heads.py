import pytest
import torch
from torch import nn

from harness.encoders.heads import PairHeads, SentimentHead


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_sentiment_head_shapes(kind: str) -> None:
    assert SentimentHead(8, kind).eval()(torch.randn(3, 8)).shape == (3, 5)


def test_chens_sentiment_mlp_has_two_linear_layers_with_dropout_before_each() -> None:
    """Chen 4.2 "a small (2-layer) MLP network with dropout"; 5.3 hidden 768, dropout 0.3 at each layer."""
    layers = list(SentimentHead(768, "mlp", 0.3).net)
    assert [type(m) for m in layers] == [nn.Dropout, nn.Linear, nn.ReLU, nn.Dropout, nn.Linear]
    assert (layers[1].in_features, layers[1].out_features, layers[4].out_features) == (768, 768, 5)
    assert all(m.p == 0.3 for m in layers if isinstance(m, nn.Dropout))
    assert [type(m) for m in SentimentHead(8, "linear").net] == [nn.Dropout, nn.Linear]


@pytest.mark.parametrize("paraphrase", ["linear", "bilinear", "cosine"])
@pytest.mark.parametrize("similarity", ["cosine", "relu_cosine"])
def test_pair_heads_shapes_and_ranges(paraphrase: str, similarity: str) -> None:
    heads = PairHeads(8, paraphrase, similarity).eval()  # type: ignore[arg-type]
    u, v = torch.randn(4, 8), torch.randn(4, 8)
    assert heads.paraphrase_logit(u, v).shape == (4,)
    score = heads.similarity_score(u, v)
    assert score.shape == (4,) and (score <= 5.0 + 1e-5).all()
    if similarity == "relu_cosine":
        assert (score >= 0).all()
    assert torch.allclose(heads.similarity_score(u, u), torch.full((4,), 5.0), atol=1e-5)


def test_sharing_modes_share_what_they_say() -> None:
    def ids(heads: PairHeads) -> tuple[set[int], set[int]]:
        return (
            {id(p) for p in heads.para_transform.parameters()},
            {id(p) for p in heads.sts_transform.parameters()},
        )

    para, sts = ids(PairHeads(8, pair_layers=2, sharing="separate"))
    assert not para & sts
    para, sts = ids(PairHeads(8, pair_layers=2, sharing="first_layer"))
    assert len(para & sts) == 2 and len(para) == 4  # the first Linear's weight and bias
    para, sts = ids(PairHeads(8, pair_layers=2, sharing="shared"))
    assert para == sts
    assert not list(PairHeads(8, pair_layers=0).para_transform.parameters())


@pytest.mark.parametrize("paraphrase", ["linear", "bilinear", "cosine"])
def test_pair_heads_run_under_bf16_autocast(paraphrase: str) -> None:
    heads = PairHeads(8, paraphrase, pair_layers=2, sharing="first_layer")  # type: ignore[arg-type]
    u, v = torch.randn(4, 8), torch.randn(4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logit = heads.paraphrase_logit(u, v)
        score = heads.similarity_score(u, v)
    (logit.float().sum() + score.float().sum()).backward()
    assert all(p.grad is not None for p in heads.parameters())


def test_the_single_linear_paraphrase_layer_has_dropout_before_it() -> None:
    heads = PairHeads(8, "linear", pair_layers=0, dropout=0.5)  # Phillips 3.2
    u, v = torch.randn(64, 8), torch.randn(64, 8)
    heads.train()
    assert not torch.equal(heads.paraphrase_logit(u, v), heads.paraphrase_logit(u, v))
    heads.eval()
    assert torch.equal(heads.paraphrase_logit(u, v), heads.paraphrase_logit(u, v))


def test_plain_cosine_paraphrase_and_linear_similarity_heads_by_hand() -> None:
    """`plain_cosine`: the logit is cos(u, v), no parameters (Chen 4.3); `linear` similarity: w . [u, v] + b
    (David et al. 5.4)."""
    torch.manual_seed(0)
    heads = PairHeads(8, "plain_cosine", "linear").eval()
    u, v = torch.randn(4, 8), torch.randn(4, 8)
    assert torch.allclose(heads.paraphrase_logit(u, v), torch.nn.functional.cosine_similarity(u, v, dim=-1))
    w, b = heads.sts_out.weight, heads.sts_out.bias
    assert torch.allclose(heads.similarity_score(u, v), torch.cat([u, v], dim=-1) @ w[0] + b, atol=1e-6)
    assert [name for name, _ in heads.named_parameters()] == ["sts_out.weight", "sts_out.bias"]


def test_the_linear_paraphrase_head_is_w_dot_u_v_plus_b_by_hand() -> None:
    """`linear` paraphrase head without hidden layers: the logit is w . [u, v] + b over both sentences
    (Phillips 3.2); a head reading one sentence twice would give another logit."""
    torch.manual_seed(0)
    heads = PairHeads(8, "linear", pair_layers=0).eval()
    u, v = torch.randn(4, 8), torch.randn(4, 8)
    w, b = heads.para_out.weight, heads.para_out.bias
    assert torch.allclose(heads.paraphrase_logit(u, v), torch.cat([u, v], dim=-1) @ w[0] + b, atol=1e-6)
