"""SentEval's PyTorch logistic regression (`usepytorch=True`, `nhid=0`): the classifier Liao's evaluation
ran (Danqi7/584-final@b5c3cef SentEval-master/examples/myown.py:52-55: `usepytorch: True, kfold: 5`,
`optim: rmsprop, batch_size: 128, tenacity: 3, epoch_size: 2`, SentEval's "prototyping" setting).

As facebookresearch/SentEval@5d6dc11 senteval/tools/classifier.py:24-120, 163-204 trains it:
- each classifier seeds numpy and torch with 1111 when it is built (`:27-30`); the Linear layer is then
  initialised and every epoch's shuffle drawn from those streams (here a private RandomState and a forked
  torch RNG, so the process's own RNGs are untouched);
- without validation data, a random 5% of the training set is held out (`:44-49`);
- rounds of `epoch_size` passes over shuffled batches, cross-entropy (mean: setting `size_average` after
  construction, `:198`, has no effect in PyTorch >= 0.4.1), the optimizer's defaults with
  `weight_decay = l2reg` (`:202-204`); after each round the dev accuracy; the best round's weights kept;
  stop after `tenacity` + 1 rounds without improvement (the count never resets) or `max_epoch` passes.
SentEval's code moves the data and the layer to CUDA (`prepare_split`, `MLP.__init__`'s `.cuda()`); here
they go to `device` (the encoder's: CUDA on a GPU worker, else the CPU), in fp32 either way. The layer
is initialised on the CPU and then moved, as `.cuda()` after construction does, so both devices start
from the same weights. SentEval reads every batch's loss back (`loss.data.item()`, a host sync on a GPU)
only to discard it; here nothing is read back while training.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

SEED = 1111


@dataclass(frozen=True)
class TorchProbeConfig:
    """SentEval's `classifier` params (senteval.py's prototyping / default settings)."""

    optim: str = "rmsprop"
    batch_size: int = 128
    tenacity: int = 3
    epoch_size: int = 2
    max_epoch: int = 200


# SentEval's two published classifier settings (README: "prototyping" and "default" configs): the first is
# what Liao's code passes; the harness names them by classifier, the folds (k) are chosen apart
CONFIGS = {"pytorch": TorchProbeConfig(), "pytorch_adam": TorchProbeConfig("adam", 64, 5, 4)}


class TorchLogisticRegression:
    """One SentEval `MLP(nhid=0)`: fit, score, predict, as scikit-learn's classifiers."""

    def __init__(
        self, n_features: int, n_classes: int, l2reg: float, config: TorchProbeConfig, device: str = "cpu"
    ) -> None:
        import torch  # here, not at the top: `harness tasks` lists this classifier without torch

        self.config, self.rng, self.device = config, np.random.RandomState(SEED), torch.device(device)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED)
            self.model = torch.nn.Linear(n_features, n_classes).to(self.device)
        optimizer = {"rmsprop": torch.optim.RMSprop, "adam": torch.optim.Adam}[config.optim]
        self.optimizer = optimizer(self.model.parameters())
        self.optimizer.param_groups[0]["weight_decay"] = l2reg

    def fit(
        self, x: np.ndarray, y: np.ndarray, validation: tuple[np.ndarray, np.ndarray] | None = None
    ) -> TorchLogisticRegression:
        import torch

        if validation is None:  # a random 5% held out
            order = self.rng.permutation(len(x))
            cut = int(0.05 * len(x))
            validation, x, y = (x[order[:cut]], y[order[:cut]]), x[order[cut:]], y[order[cut:]]
        features = torch.from_numpy(x).float().to(self.device)
        labels = torch.from_numpy(y).long().to(self.device)
        best, best_model, epochs, misses = -1.0, None, 0, 0
        while epochs <= self.config.max_epoch:
            self._train_round(features, labels)
            epochs += self.config.epoch_size
            accuracy = self.score(*validation)
            if accuracy > best:
                best, best_model = accuracy, copy.deepcopy(self.model)
            else:
                if misses >= self.config.tenacity:
                    break
                misses += 1
        assert best_model is not None  # the first round's accuracy beats -1
        self.model = best_model
        return self

    def _train_round(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        import torch

        self.model.train()
        size = self.config.batch_size
        for _ in range(self.config.epoch_size):
            order = torch.from_numpy(self.rng.permutation(len(features))).long().to(self.device)
            for start in range(0, len(features), size):
                batch = order[start : start + size]
                loss = torch.nn.functional.cross_entropy(self.model(features[batch]), labels[batch])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def predict(self, x: np.ndarray) -> np.ndarray:
        import torch

        self.model.eval()
        features = torch.from_numpy(np.asarray(x)).float().to(self.device)
        size = self.config.batch_size
        with torch.no_grad():
            return (
                torch.cat([self.model(features[i : i + size]).argmax(1) for i in range(0, len(x), size)])
                .cpu()
                .numpy()
            )

    def score(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.predict(x) == y))
