"""SentEval transfer tasks: the harness's protocol against SentEval's own code, same embeddings, one process.

    git clone https://github.com/facebookresearch/SentEval /path/SentEval   # 5d6dc11; not on PyPI
    .venv/bin/python bench/senteval_transfer.py --senteval /path/SentEval [--tasks SST5,TREC] [--model DIR]
        [--classifier sklearn|pytorch] [--pooler model|mean|...]
        [--senteval-input harness|sentence-transformers]

Every distinct sentence of the chosen tasks is encoded once (fp32, the harness's embedding cache); then
each task is scored by `harness.evaluate.tasks.transfer.evaluate_transfer` and by SentEval's task class
(`senteval.binary`, `.sst`, `.trec`, `.mrpc`, scikit-learn path, k = 5), whose batcher looks up the same
vectors by the joined tokens. Prints both scores, the largest difference and the seconds each took.
With `--senteval-input sentence-transformers` SentEval's batcher embeds instead with the model's own
`SentenceTransformer.encode` (the tokens joined with spaces, as SentEval's batchers do), the reference a
sentence-transformers model is published with; the harness side embeds with `--pooler` (default `model`:
the model's own modules, mean + Normalize for all-MiniLM-L6-v2; `mean` is the raw pooler).
SentEval is imported from the given checkout, never part of this repository. With `--classifier pytorch`
both run SentEval's PyTorch logistic regression (prototyping settings, Liao's); SentEval's code moves
everything to CUDA, so this script runs it on the CPU by answering its `.cuda()` and `torch.device("cuda")`
with the CPU, and gives its `inspect.getargspec` (gone in Python 3.11) the full-spec function.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from steps import machine_header

from harness.data.paths import resolve_data_dir
from harness.data.transfer import TRANSFER_TASKS, read_transfer
from harness.encoders.encoder import Encoder, resolve_model_name
from harness.evaluate.encode import EmbeddingCache
from harness.evaluate.suite import SentenceEncoder
from harness.evaluate.tasks.transfer import evaluate_transfer, probe_for


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
    parser.add_argument(
        "--pooler", default="model", help="the harness pooling(s), e.g. mean,model (default: model)"
    )
    parser.add_argument("--senteval-input", default="harness", choices=["harness", "sentence-transformers"])
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.senteval).resolve()))
    data = resolve_data_dir(args.data_dir)
    tasks = args.tasks.split(",")
    splits = {t: read_transfer(data, t) for t in tasks}
    sentences = sorted({s for task in splits.values() for part in task.values() for s in part.sentences()})
    poolers = args.pooler.split(",")
    ours_vectors = {}
    for pooler in poolers:
        encoder = Encoder(args.model, pooler, None)
        ours_vectors[pooler] = SentenceEncoder(encoder, 128, None, EmbeddingCache(), True)(sentences)
        print(f"harness --pooler {pooler}: {encoder.embedding}")
    theirs_vectors = ours_vectors[poolers[0]]
    if args.senteval_input == "sentence-transformers":
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(resolve_model_name(args.model), device="cpu")
        encoded = model.encode(sentences, batch_size=128, convert_to_numpy=True, show_progress_bar=True)
        theirs_vectors = dict(zip(sentences, encoded, strict=True))
        for pooler, vectors in ours_vectors.items():
            gap = max(float(np.abs(vectors[s] - theirs_vectors[s]).max()) for s in sentences)
            print(f"harness --pooler {pooler} vs SentenceTransformer.encode: largest difference {gap:.2e}")
    pytorch = args.classifier == "pytorch"
    if pytorch:
        senteval_on_cpu()
    settings = {"nhid": 0, "optim": "rmsprop", "batch_size": 128, "tenacity": 3, "epoch_size": 2}
    params = Params(batch_size=128, usepytorch=pytorch, classifier=settings if pytorch else {"nhid": 0},
                    nhid=0, kfold=5, seed=1111)  # fmt: skip
    probe = probe_for(args.classifier)

    def batcher(_: object, batch: list[list[str]]) -> np.ndarray:
        return np.stack([theirs_vectors[" ".join(tokens)] for tokens in batch])

    print(machine_header())
    names = " ".join(f"{'harness ' + p:>15s}" for p in poolers)
    print(f"{'task':6s} {'score':7s} {names} {'SentEval':>9s}")
    worst = {p: 0.0 for p in poolers}
    for task in tasks:
        ours = {p: evaluate_transfer(task, splits[task], v, 5, probe) for p, v in ours_vectors.items()}
        theirs = senteval_task(data / "senteval", task).run(params, batcher)
        for score in ("acc", "devacc", "f1"):
            if score in theirs:
                for p in poolers:
                    worst[p] = max(worst[p], abs(ours[p][score] - theirs[score]))
                row = " ".join(f"{ours[p][score]:15.2f}" for p in poolers)
                print(f"{task:6s} {score:7s} {row} {theirs[score]:9.2f}", flush=True)
    for p in poolers:
        print(f"largest difference, harness --pooler {p} vs SentEval: {worst[p]:.2f}")


if __name__ == "__main__":
    main()
