"""Gradient surgery for multi-task learning: PCGrad (Yu et al., 2020, Algorithm 1)."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def pcgrad(grads: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Combine per-task gradients [T, P] into one update [P].

    For each task i, starting from g_i, and for every other task j in a random order: if
    g_i . g_j < 0 (the gradients conflict), project g_i onto the normal plane of g_j,
        g_i <- g_i - (g_i . g_j / |g_j|^2) g_j,
    always against the original g_j. The update is the sum of the projected gradients; gradients that
    do not conflict pass unchanged.
    """
    projected = grads.clone()
    tasks = grads.shape[0]
    for i in range(tasks):
        for j in torch.randperm(tasks, generator=generator).tolist():
            if j == i:
                continue
            dot = projected[i] @ grads[j]
            if dot < 0:
                projected[i] -= dot / grads[j].pow(2).sum().clamp(min=1e-20) * grads[j]
    return projected.sum(dim=0)


def pcgrad_backward(
    losses: Sequence[torch.Tensor],
    params: Sequence[torch.nn.Parameter],
    generator: torch.Generator | None = None,
) -> None:
    """Set each parameter's .grad to the PCGrad combination of the tasks' gradients."""
    flat = []
    for loss in losses:
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        flat.append(
            torch.cat(
                [
                    (g if g is not None else torch.zeros_like(p)).reshape(-1)
                    for g, p in zip(grads, params, strict=True)
                ]
            )
        )
    combined = pcgrad(torch.stack(flat), generator)
    offset = 0
    for param in params:
        size = param.numel()
        param.grad = combined[offset : offset + size].view_as(param).clone()
        offset += size
