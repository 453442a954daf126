"""SentEval's PyTorch logistic regression, every classifier of one protocol call trained together.

A protocol call fits many small classifiers that differ only in their rows, their L2 and their
shuffles: MR at k = 10 fits 10 outer folds x 10 inner folds x 4 L2 values = 400 of them, each hundreds of
optimizer steps on a 128 x d batch, one after another (harness.evaluate.torch_probe). Here they are one
batched linear model, each fit's layer one row [W_f (classes x d) | b_f], and one training step of all of
them is a handful of operations:

    x_f = X[rows of fit f's batch]                          (one gather for every fit: [fits, n, d])
    z_f = x_f W_f^T + b_f                                   (baddbmm: F.linear's addmm, per fit)
    g_f = (softmax(z_f) - onehot(y_f)) / n                  (mean cross-entropy's gradient)
    dW_f = g_f^T x_f + l2_f W_f,  db_f = sum_i g_f,i + l2_f b_f
    RMSprop (or Adam) on every element: the optimizer's own update with weight_decay = l2_f

Each fit is trained exactly as `TorchLogisticRegression` trains it alone (SentEval@5d6dc11
senteval/tools/classifier.py:24-120, 163-204):
- its own `RandomState(1111)`: the 5% hold-out first (refits without validation data), then one
  permutation per pass; batches of `batch_size` rows in that order, the last one shorter;
- the same first layer (`torch.manual_seed(1111)`, `nn.Linear(d, classes)`), for every fit;
- the gradient as autograd computes it for `cross_entropy` (nll_loss's -1/n at the target through
  log_softmax's own backward kernel), the weight decay as `grad.add(param, alpha=l2)` (addcmul with the
  fit's l2 gives the same bits), the optimizer's update with PyTorch's own scalars;
- a fit whose pass has fewer batches (a smaller fold) sits out the steps it lacks: its weights and
  optimizer state are untouched there; Adam's bias correction counts each fit's own steps;
- after each round of `epoch_size` passes its validation accuracy (argmax over chunks of `batch_size`
  rows); the first best round's weights kept; stopped after `tenacity` + 1 rounds without a better one
  (the count never resets) or once past `max_epoch` passes.

On a CPU the batched products are MKL's per-fit kernels, and no batch is ever padded (a product summing
over padding rows would sum in another order), so every fit ends on the bits of its one-by-one twin
(tests/evaluate/test_batched_probe.py; bench/transfer_fits.py: 0 items of the 8 tasks change class). On a
GPU, cuBLAS sums in its own orders: the same choices within rounding (tests/test_cuda.py). A CPU trains at
most `CPU_CHUNK_BYTES` worth of fits at once (cache-sized batches: faster than one large one) and a GPU all
of them; a fit that stops makes room for the next, and a `Refit` joins once the fits it follows have
stopped. Nothing is read back to the host inside a round: one read of the round's validation counts
decides who goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch

from harness.evaluate.probe_fits import ProbeFit, Refit
from harness.evaluate.torch_probe import SEED, TorchProbeConfig

CPU_CHUNK_BYTES = 8 * 2**20  # the gathered [fits, batch, d] fp32 batch of one chunk, on a CPU


@dataclass
class _Fit:
    """A fit's rows after its hold-out, its shuffle stream and its progress (host side)."""

    train: np.ndarray
    validation: np.ndarray
    reg: float
    rng: np.random.RandomState
    best: float = -1.0
    misses: int = 0
    passes: int = 0
    steps: int = 0  # optimizer steps taken (Adam's bias correction)
    done: bool = False


def _prepare(fit: ProbeFit) -> _Fit:
    """The fit's rows as `TorchLogisticRegression.fit` makes them: the hold-out drawn first."""
    rng = np.random.RandomState(SEED)
    train, validation = np.asarray(fit.train), fit.validation
    if validation is None:
        order = rng.permutation(len(train))
        cut = int(0.05 * len(train))
        validation, train = train[order[:cut]], train[order[cut:]]
    return _Fit(train, np.asarray(validation), fit.reg, rng)


def first_layer(n_features: int, n_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The Linear layer every SentEval classifier starts from (`torch.manual_seed(1111)`), built on the
    CPU with the process's RNG left alone."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        layer = torch.nn.Linear(n_features, n_classes)
    return layer.weight.detach().clone(), layer.bias.detach().clone()


@dataclass(frozen=True)
class _Shape:
    """A fit's layer as one flat row, [weight (classes x d) | bias (classes)]: the optimizer's elementwise
    update is then one pass over both."""

    classes: int
    dim: int

    def weight(self, flat: torch.Tensor) -> torch.Tensor:
        return flat[:, : self.classes * self.dim].view(-1, self.classes, self.dim)

    def bias(self, flat: torch.Tensor) -> torch.Tensor:
        return flat[:, self.classes * self.dim :]


class FittedProbes:
    """The classifiers of one `fit_together` call, each its best round's layer."""

    def __init__(self, table: torch.Tensor, best: torch.Tensor, shape: _Shape, fits: list[_Fit],
                 batch_size: int) -> None:  # fmt: skip
        self.table, self.best, self.shape, self.batch_size = table, best, shape, batch_size
        self.validation = [f.validation for f in fits]
        self.validation_accuracy = [f.best for f in fits]  # each one's best round: `clf.score(validation)`

    def predict(self, which: Sequence[int], rows: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The predicted class of `rows[i]` (rows of the table) by fit `which[i]`, for every i, each as
        `TorchLogisticRegression.predict`: argmax of the layer over chunks of `batch_size` rows."""
        if not len(which):
            return []
        layers = self.best[torch.as_tensor(list(which), device=self.best.device)]
        index = _padded(rows, self.table.device)
        gather = lambda part: self.table[part]  # noqa: E731
        predicted = _argmax(gather, layers, self.shape, index, self.batch_size).cpu().numpy()
        return [predicted[i, : len(r)] for i, r in enumerate(rows)]

    def score(self, which: Sequence[int], rows: Sequence[np.ndarray], labels: np.ndarray) -> list[float]:
        """Each fit's accuracy on its rows, the mean of predicted == label (as `TorchLogisticRegression`);
        on its own validation rows, the accuracy its kept round had there (the same number, not computed
        again)."""
        known = [
            r is self.validation[w] or np.array_equal(r, self.validation[w])
            for w, r in zip(which, rows, strict=True)
        ]
        ask = [i for i, k in enumerate(known) if not k]
        predicted = dict(zip(ask, self.predict([which[i] for i in ask], [rows[i] for i in ask]), strict=True))
        return [self.validation_accuracy[w] if k else float(np.mean(predicted[i] == labels[rows[i]]))
                for i, (w, k) in enumerate(zip(which, known, strict=True))]  # fmt: skip


def _padded(rows: Sequence[np.ndarray], device: torch.device) -> torch.Tensor:
    """The row lists as one [lists, longest] index, padded with row 0."""
    padded = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)
    for i, r in enumerate(rows):
        padded[i, : len(r)] = r
    return torch.from_numpy(padded).to(device)


def _argmax(gather: Callable[[torch.Tensor], torch.Tensor], layers: torch.Tensor, shape: _Shape,
            index: torch.Tensor, chunk: int) -> torch.Tensor:  # fmt: skip
    """[fits, rows]: per fit f, argmax over classes of table[index[f]] W_f^T + b_f (`gather` gives a
    [fits, rows] index's features), `chunk` rows at a time (on the device; padding rows change no other
    row's product)."""
    weight, bias = shape.weight(layers).transpose(1, 2), shape.bias(layers).unsqueeze(1)
    out = [torch.baddbmm(bias, gather(index[:, start : start + chunk]), weight).argmax(2)
           for start in range(0, index.shape[1], chunk)]  # fmt: skip
    return torch.cat(out, 1)


def fit_together(
    table: np.ndarray,
    labels: np.ndarray,
    fits: Sequence[ProbeFit | Refit],
    n_classes: int,
    config: TorchProbeConfig,
    device: str | torch.device = "cpu",
    capacity: int | None = None,
) -> FittedProbes:
    """Train every fit (rows of `table`, labels `labels`) as SentEval's PyTorch logistic regression with
    `config`, together (module docstring), on `device` in fp32. At most `capacity` fits train at once
    (default: all on a GPU, `CPU_CHUNK_BYTES` worth on a CPU); a fit that stops makes room for the next,
    so the batch stays full until the last fits, and a `Refit` joins (first in line) as soon as the fits
    it follows have stopped. Each fit's arithmetic is its own: when it trains, and beside which others,
    changes none of its numbers."""
    device = torch.device(device)
    with torch.no_grad():
        x = torch.from_numpy(np.ascontiguousarray(table)).float().to(device)
        y = torch.from_numpy(np.asarray(labels)).long().to(device)
        room = capacity or _capacity(device, config.batch_size, x.shape[1], len(fits))
        training = _Training(x, y, _Shape(n_classes, x.shape[1]), config, len(fits), room)
        prepared: list[_Fit | None] = [_prepare(f) if isinstance(f, ProbeFit) else None for f in fits]
        # the same list, read only where a fit is prepared (waiting, active, or followed by a ready refit);
        # every refit is prepared before the end (or the loop raises)
        ready = cast(list[_Fit], prepared)
        pending = {i: f for i, f in enumerate(fits) if isinstance(f, Refit)}
        waiting = [i for i, f in enumerate(prepared) if f is not None][::-1]
        active: list[int] = []
        while active or waiting or pending:
            for i, refit in list(pending.items()):
                if all(prepared[j] is not None and ready[j].done for j in refit.after):
                    prepared[i] = _prepare(refit.choose([ready[j].best for j in refit.after]))
                    waiting.append(i)  # next in line
                    del pending[i]
            if not (active or waiting):
                raise ValueError(f"refits {sorted(pending)} follow fits that never run")
            while waiting and len(active) < room:
                active.append(waiting.pop())
            training.round(ready, active)
            active = [i for i in active if not ready[i].done]
        return FittedProbes(x, training.best, training.shape, ready, config.batch_size)


def _capacity(device: torch.device, batch_size: int, n_features: int, fits: int) -> int:
    if device.type != "cpu":
        return max(fits, 1)
    return max(1, CPU_CHUNK_BYTES // (batch_size * n_features * 4))


class _Training:
    """Every fit's layer, optimizer moments and best layer on the device, and the rounds that train them.
    Batches are gathered into one buffer made once (a fresh multi-megabyte tensor every step costs the
    allocator's page faults: MR's gather took twice as long so)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, shape: _Shape, config: TorchProbeConfig, fits: int,
                 room: int) -> None:  # fmt: skip
        self.x, self.y, self.shape, self.config = x, y, shape, config
        weight, bias = first_layer(shape.dim, shape.classes)
        layers = torch.cat([weight.reshape(-1), bias]).to(x.device).expand(fits, -1).clone()
        moments = 1 if config.optim == "rmsprop" else 2
        self.state = [layers, *(torch.zeros_like(layers) for _ in range(moments))]
        self.best = layers.clone()
        self.buffer = torch.empty(min(room, fits) * config.batch_size * shape.dim, device=x.device)

    def gather(self, rows: torch.Tensor) -> torch.Tensor:
        """The table's `rows` ([lists, rows]) as [lists, rows, d], in the buffer."""
        out = self.buffer[: rows.numel() * self.shape.dim].view(rows.numel(), self.shape.dim)
        return torch.index_select(self.x, 0, rows.reshape(-1), out=out).view(*rows.shape, self.shape.dim)

    def round(self, fits: list[_Fit], active: list[int]) -> None:
        """One round (`epoch_size` passes, then the validation accuracy) of the `active` fits."""
        index = torch.as_tensor(active).to(self.x.device)
        part = [t.index_select(0, index) for t in self.state]
        going = [fits[i] for i in active]
        reg = torch.tensor([f.reg for f in going]).to(self.x.device).unsqueeze(1)
        for _ in range(self.config.epoch_size):
            self.one_pass(going, part, reg)
        for t, piece in zip(self.state, part, strict=True):
            t.index_copy_(0, index, piece)
        self.end_round(going, part[0], index)

    def one_pass(self, fits: list[_Fit], state: list[torch.Tensor], reg: torch.Tensor) -> None:
        """One pass over each fit's training rows in a fresh permutation of its own stream: at step s every
        fit takes its s-th batch; a fit with fewer batches sits the last steps out."""
        size, n, device = self.config.batch_size, len(fits), self.x.device
        lengths = np.array([len(f.train) for f in fits])
        steps = int(-(-lengths.max() // size))
        rows = np.zeros((n, steps * size), dtype=np.int64)
        for i, f in enumerate(fits):
            rows[i, : len(f.train)] = f.train[f.rng.permutation(len(f.train))]
        counts = np.clip(lengths[None, :] - size * np.arange(steps)[:, None], 0, size)  # [steps, fits]
        # fits of one row set and one stream (split's grid: every L2 on the same train rows) draw the same
        # batches: gathered once, each fit's product reads it (an expanded batch: the same bits, tested)
        rows = rows[:1] if n > 1 and bool((rows == rows[:1]).all()) else rows
        batches = torch.from_numpy(rows.reshape(len(rows), steps, size).transpose(1, 0, 2).copy()).to(device)
        # nll_loss's backward of a mean over a batch of `count` rows: -1 / count at each row's target
        scale = torch.from_numpy(-(np.float32(1) / np.maximum(counts, 1).astype(np.float32))).to(device)
        at_target = torch.zeros(steps, len(rows), size, self.shape.classes, device=device)
        at_target.scatter_(
            3, y_at(self.y, batches), scale[:, : len(rows), None, None].expand(-1, -1, size, 1)
        )
        numbers = np.array([f.steps for f in fits])[None, :] + np.cumsum(counts > 0, axis=0)  # optimizer's
        factors = _adam_factors(numbers, device) if self.config.optim == "adam" else None
        # views made once a pass, not once a step: at a few fits a step, the calls themselves are its cost
        one_group = counts.min(1) == counts.max(1)
        views = self.shape.weight(state[0]).transpose(1, 2), self.shape.bias(state[0]).unsqueeze(1)
        step_rows, step_targets = batches.unbind(0), at_target.unbind(0)
        for s in range(steps):
            if one_group[s]:
                count = int(counts[s, 0])
                rows_s, targets_s = step_rows[s], step_targets[s]
                if count < size:
                    rows_s, targets_s = rows_s[:, :count], targets_s[:, :count]
                self.step(rows_s, targets_s, state, reg, factors, s, views)
                continue
            for group, count in _groups(counts[s]):
                chosen = torch.as_tensor(group).to(device, non_blocking=True)
                pieces = [t.index_select(0, chosen) for t in state]
                sub = None if factors is None else factors[:, :, chosen]
                self.step(
                    batches[s, chosen, :count], at_target[s, chosen, :count], pieces, reg[chosen], sub, s
                )
                for t, piece in zip(state, pieces, strict=True):
                    t.index_copy_(0, chosen, piece)
        for f, taken in zip(fits, numbers[-1], strict=True):
            f.steps = int(taken)

    def step(self, rows: torch.Tensor, at_target: torch.Tensor, state: list[torch.Tensor], reg: torch.Tensor,
             factors: torch.Tensor | None, s: int,
             views: tuple[torch.Tensor, torch.Tensor] | None = None) -> None:  # fmt: skip
        """One optimizer step of every fit in `state` ([layers, *moments]) on its batch `rows` ([fits, rows],
        or [1, rows] shared by all; `at_target`: nll_loss's gradient, likewise): cross-entropy's gradient
        plus reg x the layer, then RMSprop, or Adam with this pass's `factors` at step `s`. `views`: the
        layers' weights transposed and biases, made by the caller once for many steps."""
        layers, shape = state[0], self.shape
        fits, size = layers.shape[0], rows.shape[1]
        batch = self.gather(rows).expand(fits, size, -1)
        weight, bias = views or (shape.weight(layers).transpose(1, 2), shape.bias(layers).unsqueeze(1))
        logits = torch.baddbmm(bias, batch, weight)
        # log_softmax's backward through its own kernel (grad - exp(output) * sum(grad)), as autograd runs
        # it: the same expression written out in tensor operations rounds differently
        scores = torch.log_softmax(logits, 2)
        grad = torch.ops.aten._log_softmax_backward_data(
            at_target.expand(fits, size, -1), scores, 2, scores.dtype
        )
        flat = torch.cat([torch.bmm(grad.transpose(1, 2), batch).view(fits, -1), grad.sum(1)], 1)
        flat.addcmul_(layers, reg)  # weight decay: `grad.add(param, alpha=l2)`, bit for bit
        if factors is None:
            _rmsprop(layers, flat, state[1])
        else:
            _adam(layers, flat, state[1], state[2], factors[0, s], factors[1, s])

    def end_round(self, fits: list[_Fit], layers: torch.Tensor, index: torch.Tensor) -> None:
        """Each active fit's validation accuracy (one read to the host), its best layer kept, and whether it
        goes on (`TorchLogisticRegression.fit`'s loop). `layers`: the active fits' (rows of `index`)."""
        device, config = self.x.device, self.config
        rows = _padded([f.validation for f in fits], device)
        sizes = torch.as_tensor([len(f.validation) for f in fits]).to(device)
        real = torch.arange(rows.shape[1], device=device)[None, :] < sizes[:, None]
        predicted = _argmax(self.gather, layers, self.shape, rows, config.batch_size)
        right = ((predicted == self.y[rows]) & real).sum(1).cpu().numpy()
        improved = []
        for i, (f, correct) in enumerate(zip(fits, right, strict=True)):
            accuracy = float(np.float64(correct) / len(f.validation))  # np.mean(predicted == y)
            f.passes += config.epoch_size
            if accuracy > f.best:
                f.best = accuracy
                improved.append(i)
            elif f.misses >= config.tenacity:
                f.done = True
            else:
                f.misses += 1
            if f.passes > config.max_epoch:
                f.done = True
        if improved:
            kept = torch.as_tensor(improved).to(device)
            self.best.index_copy_(0, index[kept], layers[kept])


def y_at(y: torch.Tensor, batches: torch.Tensor) -> torch.Tensor:
    """The labels of `batches`' rows, [..., 1]."""
    return y[batches].unsqueeze(-1)


def _groups(counts: np.ndarray) -> Iterator[tuple[np.ndarray, int]]:
    """The fits taking this step, grouped by their batch's rows (> 0): one group (every fit, a full batch)
    except at a pass's last steps. A batch is never padded: the products' sums over its rows would run in
    another order than one fit's."""
    if counts.min() == counts.max():
        yield np.arange(len(counts)), int(counts[0])
        return
    for count in np.unique(counts[counts > 0]):
        yield np.flatnonzero(counts == count), int(count)


def _adam_factors(numbers: np.ndarray, device: torch.device, lr: float = 1e-3,
                  betas: tuple[float, float] = (0.9, 0.999)) -> torch.Tensor:  # fmt: skip
    """[2, steps, fits, 1]: Adam's -lr / (1 - beta1^t) and sqrt(1 - beta2^t) at each fit's step t,
    computed in double as torch.optim.Adam does, then float32 (its update casts them so)."""
    step_size = -(lr / (1 - betas[0] ** numbers.astype(np.float64)))
    correction = (1 - betas[1] ** numbers.astype(np.float64)) ** 0.5
    return torch.from_numpy(np.stack([step_size, correction]).astype(np.float32)[..., None]).to(device)


def _rmsprop(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor,
             lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-8) -> None:  # fmt: skip
    """torch.optim.RMSprop's update with its defaults (SentEval's `rmsprop`), weight decay already in
    `grad` (torch/optim/rmsprop.py, `_single_tensor_rmsprop`)."""
    square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    param.addcdiv_(grad, square_avg.sqrt().add_(eps), value=-lr)


def _adam(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
          step_size: torch.Tensor, correction: torch.Tensor, betas: tuple[float, float] = (0.9, 0.999),
          eps: float = 1e-8) -> None:  # fmt: skip
    """torch.optim.Adam's update with its defaults (SentEval's `adam`), weight decay already in `grad`
    (torch/optim/adam.py, `_single_tensor_adam`), each fit at its own step: `step_size` is its
    -lr / (1 - beta1^t), `correction` its sqrt(1 - beta2^t) ([fits, 1], `_adam_factors`). The same bits
    as the scalar update: addcdiv computes value * t1 / t2, and a float32 tensor divides as the scalar."""
    beta1, beta2 = betas
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    param.addcdiv_(exp_avg * step_size, (exp_avg_sq.sqrt() / correction).add_(eps))
