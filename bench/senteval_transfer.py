"""SentEval transfer tasks: the harness's protocol against SentEval's own code, same embeddings, one process.

    git clone https://github.com/facebookresearch/SentEval /path/SentEval   # 5d6dc11; not on PyPI
    .venv/bin/python bench/senteval_transfer.py --senteval /path/SentEval [--tasks SST5,TREC] [--model DIR]
        [--classifier sklearn|pytorch]

Every distinct sentence of the chosen tasks is encoded once (fp32, the harness's embedding cache); then
each task is scored by `harness.evaluate.transfer.evaluate_transfer` and by SentEval's task class
(`senteval.binary`, `.sst`, `.trec`, `.mrpc`, scikit-learn path, k = 5), whose batcher looks up the same
vectors by the joined tokens. Prints both scores, the largest difference and the seconds each took.
SentEval is imported from the given checkout, never part of this repository. With `--classifier pytorch`
both run SentEval's PyTorch logistic regression (prototyping settings, Liao's); SentEval's code moves
everything to CUDA, so this script runs it on the CPU by answering its `.cuda()` and `torch.device("cuda")`
with the CPU, and gives its `inspect.getargspec` (gone in Python 3.11) the full-spec function.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from steps import machine_header

from harness.data.paths import resolve_data_dir
from harness.data.transfer import TRANSFER_TASKS, read_transfer
from harness.evaluate.cache import EmbeddingCache
from harness.evaluate.suite import SentenceEncoder
from harness.evaluate.transfer import evaluate_transfer, probe_for
from harness.model.encoder import Encoder


def senteval_on_cpu() -> None:
    """Run SentEval's PyTorch classifier on the CPU (this process only)."""
    import inspect

    import torch
    from senteval.tools import classifier

    inspect.getargspec = inspect.getfullargspec  # type: ignore[attr-defined]
    torch.nn.Module.cuda = lambda self, *args, **kwargs: self  # type: ignore[method-assign]
    torch.Tensor.cuda = lambda self, *args, **kwargs: self  # type: ignore[method-assign]

    class CPUTorch:
        def __getattr__(self, name: str) -> object:
            return getattr(torch, name)

        @staticmethod
        def device(*_: object) -> torch.device:
            return torch.device("cpu")

    classifier.torch = CPUTorch()


class Params(dict):
    """SentEval's params object: a dict read by attribute."""

    __getattr__ = dict.__getitem__


def senteval_task(root: Path, task: str):  # noqa: ANN201
    import senteval.binary as binary
    import senteval.mrpc as mrpc
    import senteval.sst as sst
    import senteval.trec as trec

    made = {
        "MR": lambda: binary.MREval(str(root / "MR")),
        "CR": lambda: binary.CREval(str(root / "CR")),
        "SUBJ": lambda: binary.SUBJEval(str(root / "SUBJ")),
        "MPQA": lambda: binary.MPQAEval(str(root / "MPQA")),
        "SST2": lambda: sst.SSTEval(str(root / "SST/binary"), nclasses=2),
        "SST5": lambda: sst.SSTEval(str(root / "SST/fine"), nclasses=5),
        "TREC": lambda: trec.TRECEval(str(root / "TREC")),
        "MRPC": lambda: mrpc.MRPCEval(str(root / "MRPC")),
    }
    return made[task]()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--senteval", required=True, help="a SentEval checkout (the directory with senteval/)"
    )
    parser.add_argument("--tasks", default=",".join(TRANSFER_TASKS))
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--classifier", default="sklearn", choices=["sklearn", "pytorch"])
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.senteval).resolve()))
    data = resolve_data_dir(args.data_dir)
    tasks = args.tasks.split(",")
    splits = {t: read_transfer(data, t) for t in tasks}
    sentences = sorted({s for task in splits.values() for part in task.values() for s in part.sentences()})
    vectors = SentenceEncoder(Encoder(args.model, "mean", None), 128, None, EmbeddingCache(), True)(sentences)
    pytorch = args.classifier == "pytorch"
    if pytorch:
        senteval_on_cpu()
    settings = {"nhid": 0, "optim": "rmsprop", "batch_size": 128, "tenacity": 3, "epoch_size": 2}
    params = Params(batch_size=128, usepytorch=pytorch, classifier=settings if pytorch else {"nhid": 0},
                    nhid=0, kfold=5, seed=1111)  # fmt: skip
    probe = probe_for(args.classifier)

    def batcher(_: object, batch: list[list[str]]) -> np.ndarray:
        return np.stack([vectors[" ".join(tokens)] for tokens in batch])

    print(machine_header())
    print(f"{'task':6s} {'score':7s} {'harness':>9s} {'SentEval':>9s} {'harness s':>10s} {'SentEval s':>11s}")
    worst = 0.0
    for task in tasks:
        start = time.perf_counter()
        ours = evaluate_transfer(task, splits[task], vectors, 5, probe)
        middle = time.perf_counter()
        theirs = senteval_task(data / "senteval", task).run(params, batcher)
        end = time.perf_counter()
        for score in ("acc", "devacc", "f1"):
            if score in theirs:
                worst = max(worst, abs(ours[score] - theirs[score]))
                print(f"{task:6s} {score:7s} {ours[score]:9.2f} {theirs[score]:9.2f} "
                      f"{middle - start:10.1f} {end - middle:11.1f}")  # fmt: skip
    print(f"largest difference: {worst:.2f}")


if __name__ == "__main__":
    main()
