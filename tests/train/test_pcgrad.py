"""PCGrad as Yu et al. define it: conflicting gradients are projected, others pass unchanged; the update
is their sum (`reduction: sum`, Algorithm 1) or, on the entries every task reaches, their mean (the
Pytorch-PCGrad code Chen uses, the default)."""

import torch

from harness.train.pcgrad import pcgrad, pcgrad_backward


def test_conflicting_gradients_are_projected_onto_normal_planes() -> None:
    g1, g2 = torch.tensor([1.0, 0.0]), torch.tensor([-1.0, 1.0])  # g1 . g2 = -1 < 0
    # g1' = g1 - (-1 / 2) g2 = (0.5, 0.5); g2' = g2 - (-1 / 1) g1 = (0, 1)
    combined = pcgrad(torch.stack([g1, g2])).sum(dim=0)
    assert torch.allclose(combined, torch.tensor([0.5, 1.5]))
    assert torch.dot(torch.tensor([0.5, 0.5]), g2) == 0 and torch.dot(torch.tensor([0.0, 1.0]), g1) == 0


def test_non_conflicting_gradients_are_unchanged() -> None:
    grads = torch.tensor([[1.0, 0.0, 2.0], [1.0, 1.0, 0.0], [0.0, 3.0, 1.0]])  # pairwise dots >= 0
    assert torch.equal(pcgrad(grads), grads)


def test_only_the_conflicting_pair_is_touched_whatever_the_order() -> None:
    grads = torch.tensor(
        [[1.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    )  # third task conflicts with none
    for seed in range(4):
        combined = pcgrad(grads, torch.Generator().manual_seed(seed)).sum(dim=0)
        assert torch.allclose(combined, torch.tensor([0.5, 1.5, 1.0]))


def test_backward_writes_the_combined_gradient() -> None:
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 1)
    x = torch.randn(4, 3)
    losses = [layer(x).sum(), -layer(x).pow(2).sum()]
    params = list(layer.parameters())
    per_task = [
        torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, params, retain_graph=True)])
        for loss in losses
    ]
    expected = pcgrad(torch.stack(per_task), torch.Generator().manual_seed(1)).sum(dim=0) / 2  # shared: mean
    pcgrad_backward(losses, params, torch.Generator().manual_seed(1))
    assert torch.allclose(torch.cat([p.grad.reshape(-1) for p in params]), expected)


def test_the_shared_encoder_gets_the_tasks_mean_and_each_head_its_own_gradient() -> None:
    """An encoder both tasks reach and one head per task: Pytorch-PCGrad's mean on the encoder's entries,
    the sum on the heads' (which other tasks reach only through projections); `sum` sums everywhere."""
    torch.manual_seed(0)
    encoder, heads = torch.nn.Linear(3, 2), [torch.nn.Linear(2, 1) for _ in range(3)]
    x = torch.randn(5, 3)
    losses = [head(encoder(x)).pow(2).mean() * (i + 1) for i, head in enumerate(heads)]
    params = [*encoder.parameters(), *(p for head in heads for p in head.parameters())]
    grads = []
    for loss in losses:
        parts = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        grads.append(torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1)
                                for g, p in zip(parts, params, strict=True)]))  # fmt: skip
    projected_sum = pcgrad(torch.stack(grads), torch.Generator().manual_seed(2)).sum(dim=0)
    pcgrad_backward(losses, params, torch.Generator().manual_seed(2))
    got = torch.cat([p.grad.reshape(-1) for p in params])
    n_encoder = sum(p.numel() for p in encoder.parameters())
    assert torch.allclose(got[:n_encoder], projected_sum[:n_encoder] / 3)
    assert torch.allclose(got[n_encoder:], projected_sum[n_encoder:])
    pcgrad_backward(losses, params, torch.Generator().manual_seed(2), reduction="sum")
    assert torch.allclose(torch.cat([p.grad.reshape(-1) for p in params]), projected_sum)
