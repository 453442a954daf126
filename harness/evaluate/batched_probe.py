"""SentEval's PyTorch logistic regression, every classifier of one protocol call trained together.

A protocol call fits many small classifiers that differ only in their rows, their L2 and their
shuffles: MR at k = 10 fits 10 outer folds x 10 inner folds x 4 L2 values = 400 of them, each hundreds of
optimizer steps on a 128 x d batch, one after another (harness.evaluate.torch_probe). Here they are one
batched linear model, weights W [fits, classes, d] and bias b [fits, classes], and one training step of all
of them is a handful of operations:

    x_f = X[rows of fit f's batch]                          (one gather for every fit: [fits, 128, d])
    z_f = x_f W_f^T + b_f                                   (baddbmm: F.linear's addmm, per fit)
    g_f = (softmax(z_f) - onehot(y_f)) / n_f                (mean cross-entropy's gradient, padded rows 0)
    dW_f = g_f^T x_f + l2_f W_f,  db_f = sum_i g_f,i + l2_f b_f
    RMSprop (or Adam) on every element: the optimizer's own update with weight_decay = l2_f

Each fit is trained exactly as `TorchLogisticRegression` trains it alone (SentEval@5d6dc11
senteval/tools/classifier.py:24-120, 163-204), so the batch changes no result:
- its own `RandomState(1111)`: the 5% hold-out first (refits without validation data), then one
  permutation per pass; batches of `batch_size` rows in that order, the last one shorter;
- the same first layer (`torch.manual_seed(1111)`, `nn.Linear(d, classes)`), for every fit;
- the gradient as autograd computes it for `cross_entropy` (log_softmax's backward: exp(log_softmax) / n,
  less 1 / n at the target), the weight decay as `grad.add(param, alpha=l2)` (addcmul with the fit's l2
  gives the same bits), the optimizer's update with PyTorch's own scalars;
- a fit whose pass has fewer batches (a smaller fold) sits out the steps it lacks: its weights and
  optimizer state are untouched there; Adam's bias correction counts each fit's own steps;
- after each round of `epoch_size` passes its validation accuracy (argmax over chunks of `batch_size`
  rows); the first best round's weights kept; stopped after `tenacity` + 1 rounds without a better one
  (the count never resets) or once past `max_epoch` passes; stopped fits leave the batch.

The only difference is floating point: a batched product may sum in another order than the one-fit
product, which can move a weight by an ulp and, rarely, a prediction that sits on the decision boundary
(bench/transfer_fits.py counts the items whose class differs; tests/evaluate/test_batched_probe.py checks
the chosen L2 and the accuracies). On a CPU the fits go through in chunks whose gathered batch stays within
`CPU_CHUNK_BYTES` (cache-sized: faster than one large batch); on a GPU all of them at once. Nothing is read
back to the host inside a round: one read of the round's validation counts decides who goes on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from harness.evaluate.probe import ProbeFit
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

    def __init__(self, table: torch.Tensor, best: torch.Tensor, shape: _Shape, accuracies: list[float],
                 batch_size: int) -> None:  # fmt: skip
        self.table, self.best, self.shape, self.batch_size = table, best, shape, batch_size
        self.validation_accuracy = accuracies  # each fit's best round: what `clf.score(validation)` gives

    def predict(self, which: Sequence[int], rows: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The predicted class of `rows[i]` (rows of the table) by fit `which[i]`, for every i, each as
        `TorchLogisticRegression.predict`: argmax of the layer over chunks of `batch_size` rows."""
        if not len(which):
            return []
        layers = self.best[torch.as_tensor(list(which), device=self.best.device)]
        index = _padded(rows, self.table.device)
        predicted = _argmax(self.table, layers, self.shape, index, self.batch_size).cpu().numpy()
        return [predicted[i, : len(r)] for i, r in enumerate(rows)]

    def score(self, which: Sequence[int], rows: Sequence[np.ndarray], labels: np.ndarray) -> list[float]:
        """Each fit's accuracy on its rows, the mean of predicted == label (as `TorchLogisticRegression`)."""
        predicted = self.predict(which, rows)
        return [float(np.mean(p == labels[r])) for p, r in zip(predicted, rows, strict=True)]


def _padded(rows: Sequence[np.ndarray], device: torch.device) -> torch.Tensor:
    """The row lists as one [lists, longest] index, padded with row 0."""
    padded = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)
    for i, r in enumerate(rows):
        padded[i, : len(r)] = r
    return torch.from_numpy(padded).to(device)


def _argmax(table: torch.Tensor, layers: torch.Tensor, shape: _Shape, index: torch.Tensor, chunk: int
            ) -> torch.Tensor:  # fmt: skip
    """[fits, rows]: per fit f, argmax over classes of table[index[f]] W_f^T + b_f, `chunk` rows at a time
    (on the device; padding rows change no other row's product)."""
    weight, bias = shape.weight(layers).transpose(1, 2), shape.bias(layers).unsqueeze(1)
    out = []
    for start in range(0, index.shape[1], chunk):
        part = index[:, start : start + chunk]
        x = table.index_select(0, part.reshape(-1)).view(*part.shape, -1)
        out.append(torch.baddbmm(bias, x, weight).argmax(2))
    return torch.cat(out, 1)


def fit_together(
    table: np.ndarray,
    labels: np.ndarray,
    fits: Sequence[ProbeFit],
    n_classes: int,
    config: TorchProbeConfig,
    device: str | torch.device = "cpu",
    capacity: int | None = None,
) -> FittedProbes:
    """Train every fit (rows of `table`, labels `labels`) as SentEval's PyTorch logistic regression with
    `config`, together (module docstring), on `device` in fp32. At most `capacity` fits train at once
    (default: all on a GPU, `CPU_CHUNK_BYTES` worth on a CPU); a fit that stops makes room for the next,
    so the batch stays full until the last fits (each fit's arithmetic is its own: when it trains, and
    beside which others, changes none of its numbers)."""
    device = torch.device(device)
    with torch.no_grad():
        x = torch.from_numpy(np.ascontiguousarray(table)).float().to(device)
        y = torch.from_numpy(np.asarray(labels)).long().to(device)
        shape = _Shape(n_classes, x.shape[1])
        weight, bias = first_layer(x.shape[1], n_classes)
        prepared = [_prepare(f) for f in fits]
        layers = torch.cat([weight.reshape(-1), bias]).to(device).expand(len(fits), -1).clone()
        state = [layers, *(torch.zeros_like(layers) for _ in range(1 if config.optim == "rmsprop" else 2))]
        best = layers.clone()
        room = capacity or _capacity(device, config.batch_size, x.shape[1], len(fits))
        waiting, active = list(range(len(fits)))[::-1], []
        while active or waiting:
            while waiting and len(active) < room:
                active.append(waiting.pop())
            _round(x, y, prepared, active, state, best, shape, config)
            active = [i for i in active if not prepared[i].done]
        return FittedProbes(x, best, shape, [f.best for f in prepared], config.batch_size)


def _capacity(device: torch.device, batch_size: int, n_features: int, fits: int) -> int:
    if device.type != "cpu":
        return max(fits, 1)
    return max(1, CPU_CHUNK_BYTES // (batch_size * n_features * 4))


def _round(x: torch.Tensor, y: torch.Tensor, fits: list[_Fit], active: list[int], state: list[torch.Tensor],
           best: torch.Tensor, shape: _Shape, config: TorchProbeConfig) -> None:  # fmt: skip
    """One round (`epoch_size` passes, then the validation accuracy) of the `active` fits; `state` is
    [layers, *optimizer moments] of every fit."""
    index = torch.as_tensor(active).to(x.device)
    part = [t.index_select(0, index) for t in state]
    going = [fits[i] for i in active]
    reg = torch.tensor([f.reg for f in going]).to(x.device).unsqueeze(1)
    for _ in range(config.epoch_size):
        _one_pass(x, y, going, part, reg, shape, config)
    for t, piece in zip(state, part, strict=True):
        t.index_copy_(0, index, piece)
    _end_round(x, y, going, part[0], best, index, shape, config)


def _one_pass(x: torch.Tensor, y: torch.Tensor, fits: list[_Fit], state: list[torch.Tensor],
              reg: torch.Tensor, shape: _Shape, config: TorchProbeConfig) -> None:  # fmt: skip
    """One pass over each fit's training rows in a fresh permutation of its own stream: at step s every
    fit takes its s-th batch; a fit with fewer batches sits the last steps out."""
    size, n = config.batch_size, len(fits)
    lengths = np.array([len(f.train) for f in fits])
    steps = int(-(-lengths.max() // size))
    rows = np.zeros((n, steps * size), dtype=np.int64)
    for i, f in enumerate(fits):
        rows[i, : len(f.train)] = f.train[f.rng.permutation(len(f.train))]
    counts = np.clip(lengths[None, :] - size * np.arange(steps)[:, None], 0, size)  # [steps, fits]
    # fits of one row set and one stream (split's grid: every L2 on the same train rows) draw the same
    # batches: gathered once, each fit's product reads it (an expanded batch: the same bits, tested)
    shared = n > 1 and bool((rows == rows[:1]).all())
    rows = rows[:1] if shared else rows
    batches = torch.from_numpy(rows.reshape(len(rows), steps, size).transpose(1, 0, 2).copy()).to(x.device)
    # nll_loss's backward of a mean over a batch of `count` rows: -1 / count at each row's target
    scale = torch.from_numpy(-(np.float32(1) / np.maximum(counts, 1).astype(np.float32))).to(x.device)
    at_target = torch.zeros(steps, len(rows), size, shape.classes, device=x.device)
    at_target.scatter_(3, y[batches].unsqueeze(3), scale[:, : len(rows), None, None].expand(-1, -1, size, 1))
    numbers = np.array([f.steps for f in fits])[None, :] + np.cumsum(counts > 0, axis=0)  # optimizer steps
    factors = _adam_factors(numbers, x.device) if config.optim == "adam" else None
    for s in range(steps):
        for group, count in _groups(counts[s]):
            if len(group) == n:
                _step(x, batches[s, :, :count], at_target[s, :, :count], state, reg, shape, factors, s)
                continue
            chosen = torch.as_tensor(group).to(x.device, non_blocking=True)
            pieces = [t.index_select(0, chosen) for t in state]
            sub = None if factors is None else factors[:, :, chosen]
            _step(
                x,
                batches[s, chosen, :count],
                at_target[s, chosen, :count],
                pieces,
                reg[chosen],
                shape,
                sub,
                s,
            )
            for t, piece in zip(state, pieces, strict=True):
                t.index_copy_(0, chosen, piece)
    for f, taken in zip(fits, numbers[-1], strict=True):
        f.steps = int(taken)


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


def _step(x: torch.Tensor, rows: torch.Tensor, at_target: torch.Tensor, state: list[torch.Tensor],
          reg: torch.Tensor, shape: _Shape, factors: torch.Tensor | None, s: int) -> None:  # fmt: skip
    """One optimizer step of every fit in `state` ([layers, *moments]) on its batch `rows` ([fits, rows],
    or [1, rows] shared by all; `at_target`: nll_loss's gradient, likewise): cross-entropy's gradient plus
    reg x the layer, then RMSprop, or Adam with this pass's `factors` at step `s`."""
    layers = state[0]
    fits, size = layers.shape[0], rows.shape[1]
    batch = x.index_select(0, rows.reshape(-1)).view(rows.shape[0], size, -1).expand(fits, size, -1)
    at_target = at_target.expand(fits, size, -1)
    logits = torch.baddbmm(shape.bias(layers).unsqueeze(1), batch, shape.weight(layers).transpose(1, 2))
    # log_softmax's backward through its own kernel (grad - exp(output) * sum(grad)), as autograd runs it:
    # the same expression written out in tensor operations rounds differently
    grad = torch.ops.aten._log_softmax_backward_data(at_target, torch.log_softmax(logits, 2), 2, logits.dtype)
    flat = torch.cat([torch.bmm(grad.transpose(1, 2), batch).view(fits, -1), grad.sum(1)], 1)
    flat.addcmul_(layers, reg)  # weight decay: `grad.add(param, alpha=l2)`, bit for bit
    if factors is None:
        _rmsprop(layers, flat, state[1])
    else:
        _adam(layers, flat, state[1], state[2], factors[0, s], factors[1, s])


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


def _end_round(x: torch.Tensor, y: torch.Tensor, fits: list[_Fit], layers: torch.Tensor, best: torch.Tensor,
               index: torch.Tensor, shape: _Shape, config: TorchProbeConfig) -> None:  # fmt: skip
    """Each active fit's validation accuracy (one read to the host), its best layer kept, and whether it
    goes on (`TorchLogisticRegression.fit`'s loop). `layers`: the active fits' (rows of `index`)."""
    rows = _padded([f.validation for f in fits], x.device)
    sizes = torch.as_tensor([len(f.validation) for f in fits], device=x.device)
    real = torch.arange(rows.shape[1], device=x.device)[None, :] < sizes[:, None]
    right = ((_argmax(x, layers, shape, rows, config.batch_size) == y[rows]) & real).sum(1).cpu().numpy()
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
        kept = torch.as_tensor(improved, device=x.device)
        best.index_copy_(0, index[kept], layers[kept])
