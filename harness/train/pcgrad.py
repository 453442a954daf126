"""Gradient surgery for multi-task learning: PCGrad (Yu et al., 2020, Algorithm 1).

How the projected task gradients become one update (`reduction`):
- `mean` (the default): the mean over the tasks for every parameter all of them reach (the shared
  encoder), the sum elsewhere (a head only its own task reaches). Chen's code "is taken off-the-shelf from
  https://github.com/WeiChengTseng/Pytorch-PCGrad" (4.4 Attributions), whose default
  PCGrad(optimizer, reduction='mean') averages the shared entries and sums the rest
  (Pytorch-PCGrad@e987ac6 pcgrad.py:56-65; its `sum` branch is unreachable: `if self._reduction:` holds
  for 'sum' too). So with three tasks the encoder's step is a third of the sum's, against the same
  clipping threshold. David et al. (sec. 2) take "an implementation of gradient surgery from Yu et al."
  without naming it: the same default.
- `sum`: Yu et al.'s Algorithm 1 as written, Delta theta = sum_i g_i^PC, for every parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch

Reduction = Literal["mean", "sum"]


def pcgrad(grads: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """The projected per-task gradients [T, P] of the per-task gradients [T, P].

    For each task i, starting from g_i, and for every other task j in a random order: if
    g_i . g_j < 0 (the gradients conflict), project g_i onto the normal plane of g_j,
        g_i <- g_i - (g_i . g_j / |g_j|^2) g_j,
    always against the original g_j; gradients that do not conflict pass unchanged. How they combine
    into one update: `pcgrad_backward` (module docstring).
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
    return projected


def pcgrad_backward(
    losses: Sequence[torch.Tensor],
    params: Sequence[torch.nn.Parameter],
    generator: torch.Generator | None = None,
    reduction: Reduction = "mean",
) -> None:
    """Set each parameter's .grad to the PCGrad combination of the tasks' gradients: the sum of the
    projected gradients, divided by the number of tasks on a parameter every task's loss reaches
    (`reduction: mean`; module docstring)."""
    flat, reached = [], []
    for loss in losses:
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        reached.append([g is not None for g in grads])
        flat.append(
            torch.cat(
                [
                    (g if g is not None else torch.zeros_like(p)).reshape(-1)
                    for g, p in zip(grads, params, strict=True)
                ]
            )
        )
    total = pcgrad(torch.stack(flat), generator).sum(dim=0)
    offset = 0
    for i, param in enumerate(params):
        size = param.numel()
        shared = reduction == "mean" and all(r[i] for r in reached)
        grad = total[offset : offset + size].view_as(param)
        param.grad = grad / len(losses) if shared else grad.clone()
        offset += size
