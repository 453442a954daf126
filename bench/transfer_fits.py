"""SentEval's PyTorch classifier on the 8 transfer tasks: its fits one by one (SentEval's loop, the harness's
until issue 54) against all fits of a protocol call trained together (harness.evaluate.batched_probe), side
by side in one process, same embeddings, for each preset (prototyping: k = 5; default: k = 10).

    .venv/bin/python bench/transfer_fits.py [--model all-MiniLM-L6-v2|tiny|DIR] [--tasks MR,CR,...]
        [--presets prototyping,default] [--classifier pytorch|pytorch_adam] [--embeddings FILE.npy]
        [--one-by-one TASKS] [--device cpu|cuda] [--json FILE]

Per task and preset it prints the seconds of each way, the speed-up, both ways' scores (acc, devacc, MRPC's
f1), whether every chosen L2 (each outer fold's for MR, CR, SUBJ, MPQA; the one of TREC, MRPC, SST2, SST5)
is the same, and how many scored items got another predicted class (the per-item record compared item by
item); then the totals. `--model tiny` embeds with a random 1-layer BERT of hidden size 32 (the tests'
model) with the data folder's bert-base-uncased tokenizer. The sentences of every task are embedded once
(fp32, the model's own pooling) and kept in `--embeddings` (default .harness/cache/transfer-<model>.npy),
checked against the sentence list's digest, so a second run skips the encoding (4 minutes for MiniLM on
2 CPU cores). Torch runs on its default threads here (set OMP_NUM_THREADS / --threads to change).
`--device` (default: the GPU where there is one, as a trial fits them where its encoder runs) is where both
ways fit; `--one-by-one TASKS` fits only those tasks one by one too (on a GPU SentEval's one-by-one fits
of MR alone take minutes), the others only together. A model whose weights are not here is a random model
of its config (harness.encoders.standin: bert-base-uncased gives a 768-d embedding set).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from steps import machine_header

from harness.data.paths import resolve_data_dir
from harness.data.transfer import TRANSFER_TASKS, read_transfer
from harness.device import pick_device
from harness.evaluate.probe import Probe
from harness.evaluate.probe_fits import ProbeFit, Refit
from harness.evaluate.registry import ITEMS
from harness.evaluate.tasks.transfer import PRESETS, evaluate_transfer
from harness.evaluate.torch_probe import CONFIGS
from harness.home import find_home


class Recorded:
    """A probe that counts its fits and records every chosen regularisation: each refit's choice (by its
    position), and the fit that predicts test items of `split`."""

    def __init__(self, probe: Probe) -> None:
        self.probe, self.fits, self.picks = probe, 0, {}

    def __getattr__(self, name: str) -> Any:  # the probe's settings and grids
        return getattr(self.probe, name)

    @property
    def chosen(self) -> list[float]:
        return [self.picks[key] for key in sorted(self.picks)]

    def fit_all(self, table: np.ndarray, labels: np.ndarray, fits: list[ProbeFit | Refit]) -> Any:
        self.fits += len(fits)
        picks = self.picks

        def watched(position: int, refit: Refit) -> Refit:
            def choose(scores: list[float]) -> ProbeFit:
                fit = refit.choose(scores)
                picks[position] = fit.reg
                return fit

            return Refit(refit.after, choose)

        fits = [watched(i, f) if isinstance(f, Refit) else f for i, f in enumerate(fits)]
        fitted = self.probe.fit_all(table, labels, fits)

        class Watched:
            def score(self, which: list[int], rows: list[np.ndarray], labels: np.ndarray) -> list[float]:
                return fitted.score(which, rows, labels)

            def predict(self, which: list[int], rows: list[np.ndarray]) -> list[np.ndarray]:
                for w, r in zip(which, rows, strict=True):
                    if isinstance(fits[w], ProbeFit) and r is not fits[w].validation:
                        picks[w] = fits[w].reg  # split: the fit that scores the test set
                return fitted.predict(which, rows)

        return Watched()


def tiny_model(data_dir: Path) -> str:
    """The tests' random BERT (1 layer, hidden 32, 2 heads), saved in a temporary folder."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    folder = Path(tempfile.mkdtemp(prefix="tiny-bert-"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)  # fmt: skip
    BertModel(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(data_dir / "tokenizers" / "bert-base-uncased").save_pretrained(folder)
    return str(folder)


def embeddings(model: str, sentences: list[str], path: Path, data_dir: Path) -> dict[str, np.ndarray]:
    """Every sentence's fp32 embedding by the model's own pooling, from `path` when it holds them."""
    digest = hashlib.sha256("\n".join(sentences).encode()).hexdigest()
    stamp = path.with_suffix(".sha256")
    if path.is_file() and stamp.is_file() and stamp.read_text() == digest:
        return dict(zip(sentences, np.load(path), strict=True))
    from harness.device import DTYPES, pick_device, resolve_precision
    from harness.encoders.encoder import Encoder
    from harness.encoders.standin import local_model
    from harness.evaluate.encode import EmbeddingCache
    from harness.evaluate.suite import SentenceEncoder

    folder = tiny_model(data_dir) if model == "tiny" else local_model(model, data_dir)[0]
    device = pick_device()
    encoder = Encoder(folder, "mean" if model == "tiny" else "model", None).to(device).eval()
    amp = DTYPES[resolve_precision(device, "auto")]
    vectors = SentenceEncoder(encoder, 128, amp, EmbeddingCache(), True)(sentences)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.stack([vectors[s] for s in sentences]).astype(np.float32))
    stamp.write_text(digest)
    return vectors


def run(task: str, splits: dict, vectors: dict, k: int, probe: Probe) -> tuple[dict, Recorded, float]:
    recorded = Recorded(probe)
    start = time.perf_counter()
    scores = evaluate_transfer(task, splits, vectors, k, recorded)  # type: ignore[arg-type]
    return scores, recorded, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--presets", default="prototyping,default")
    parser.add_argument("--tasks", default=",".join(TRANSFER_TASKS))
    parser.add_argument("--classifier", default="pytorch", choices=["pytorch", "pytorch_adam"])
    parser.add_argument("--embeddings", default=None, help="where the embeddings are kept (.npy)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--device", default=None, help="where the fits run (default: the GPU if any)")
    parser.add_argument("--one-by-one", default=None, help="tasks also fitted one by one (default: all)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    data = resolve_data_dir(args.data_dir)
    tasks = args.tasks.split(",")
    splits = {t: read_transfer(data, t) for t in tasks}
    sentences = sorted({s for task in splits.values() for part in task.values() for s in part.sentences()})
    name = Path(args.model).name if Path(args.model).is_dir() else args.model.replace("/", "_")
    cache = Path(args.embeddings or find_home()[0] / "cache" / f"transfer-{name}.npy")
    vectors = embeddings(args.model, sentences, cache, data)
    dim = len(next(iter(vectors.values())))
    device = args.device or str(pick_device())
    print(machine_header())
    print(f"model {args.model} ({dim}-d embeddings), classifier {args.classifier} on {device}, torch "
          f"threads {torch.get_num_threads()}")  # fmt: skip
    one_by_one = Probe(CONFIGS[args.classifier], device, together=False)
    together = Probe(CONFIGS[args.classifier], device)
    alone = set(tasks if args.one_by_one is None else args.one_by_one.split(","))
    rng = np.random.default_rng(0)
    table, labels = rng.normal(size=(600, dim)).astype(np.float32), rng.integers(0, 2, 600)
    for probe in (one_by_one, together):  # first calls (MKL's, the thread pool's start) are not timed
        probe.fit_all(table, labels, [ProbeFit(np.arange(500), 1e-4, np.arange(500, 600))])
    rows, header = [], "preset      k task  fits  1-by-1 s  together s  speed-up  acc (1-by-1 / together)"
    for preset in args.presets.split(","):
        k = PRESETS[preset]
        print(f"\n{header}  devacc          f1              same L2  items differ")
        for task in tasks:
            b, rb, tb = run(task, splits[task], vectors, k, together)
            a, ra, ta = (
                run(task, splits[task], vectors, k, one_by_one) if task in alone else (b, rb, float("nan"))
            )
            differ = int((a[ITEMS].prediction.to_numpy() != b[ITEMS].prediction.to_numpy()).sum())
            row = {"preset": preset, "k": k, "task": task, "fits": ra.fits, "one_by_one_s": ta,
                   "together_s": tb, "same_l2": ra.chosen == rb.chosen, "items_differ": differ,
                   "items": len(a[ITEMS])}  # fmt: skip
            scores = [s for s in ("acc", "devacc", "f1") if s in a]
            row.update({f"{s}_{way}": r[s] for s in scores for way, r in (("1by1", a), ("tog", b))})
            rows.append(row)
            pairs = {s: f"{a[s]:6.2f} / {b[s]:6.2f}" for s in scores}
            print(f"{preset:11s} {k:2d} {task:5s} {ra.fits:4d} {ta:9.1f} {tb:11.2f} {ta / tb:8.1f}x  "
                  f"{pairs['acc']:24s} {pairs['devacc']} {pairs.get('f1', ' ' * 15)} "
                  f"{str(row['same_l2']):7s}  {differ} of {len(a[ITEMS])}", flush=True)  # fmt: skip
        mine = [r for r in rows if r["preset"] == preset]
        both = [r for r in mine if r["one_by_one_s"] == r["one_by_one_s"]]  # not NaN: fitted both ways
        total_a, total_b = sum(r["one_by_one_s"] for r in both), sum(r["together_s"] for r in both)
        print(f"{preset:11s} {k:2d} all   {sum(r['fits'] for r in mine):4d} {total_a:9.1f} {total_b:11.2f} "
              f"{total_a / total_b:8.1f}x  items differ: {sum(r['items_differ'] for r in both)}"
              + (f"; together, all {len(mine)} tasks: {sum(r['together_s'] for r in mine):.1f} s"
                 if len(both) < len(mine) else ""))  # fmt: skip
    if args.json:
        figures = {
            "machine": machine_header(),
            "model": args.model,
            "dim": dim,
            "classifier": args.classifier,
        }
        Path(args.json).write_text(json.dumps({**figures, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
