"""The harness's training step against a bare PyTorch step of the same model and batch, on the CPU: what the
harness adds on the host (issue 54 item 2, goal <= 1.15x).

    .venv/bin/python bench/step_overhead.py [--layers 1] [--hidden 32] [--batch-size 64] [--length 32]
        [--steps 200] [--repeats 5] [--json FILE]

The model is the tests' random BERT (1 layer, hidden 32, 2 heads, the data folder's bert-base-uncased
tokenizer), fp32, on the torch threads of this process. The batches are unsupervised SimCSE's: wiki
sentences, each twice (two dropout views), mean pooling, InfoNCE at temperature 0.05, gradient clipping at
1.0, fused AdamW.
- harness: `train_step` of the `unsup_simcse` method's first stage (no projection head, as the bare step
  has none), on the stage's own batches of sentences, tokenized ahead as the loop does
  (harness.encoders.token_store); forward padding-free (harness.encoders.packed).
- bare: the same weights as a `transformers.BertModel`, each batch tokenized beforehand into padded
  tensors, then `model(ids, mask)`, pooling, loss, `backward`, `clip_grad_norm_`, `AdamW(fused=True).step`,
  `zero_grad`: nothing else.
Both run `--steps` steps after 5 untimed ones, `--repeats` times in alternation (so a noisy neighbour on a
shared VM slows both); the figure is the ratio of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
from steps import machine_header, write_figures

from harness.data.paths import resolve_data_dir
from harness.stages.contrastive.unsup import wiki_sentences

TEMPERATURE = 0.05


def tiny_bert(folder: Path, layers: int, hidden: int, data: Path) -> str:
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=128)  # fmt: skip
    BertModel(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(data / "tokenizers" / "bert-base-uncased").save_pretrained(folder)
    return str(folder)


def harness_side(path: str, texts: list[str], batch_size: int, length: int):  # noqa: ANN201
    """A function running one harness step on the next batch, and its stage's batches."""
    from harness.data.paths import resolve_data_dir
    from harness.methods.pipeline import PipelineData
    from harness.planning.cost import build
    from harness.resolve.run_spec import resolve_run
    from harness.train.loop import adamw, train_step

    config = {"method": "unsup_simcse", "model": path, "pooling": "mean", "max_seq_length": length,
              "batch_size": batch_size, "precision": "fp32", "temperature": TEMPERATURE,
              "mlp_projection": False, "compile": False}  # fmt: skip
    built, _ = build(resolve_run(config), resolve_data_dir(), torch.device("cpu"))
    stage = built.model.stages(built.run.settings, PipelineData(None, [texts]))[0]
    import random

    batches = stage.make_batches(random.Random(0))
    stage.remember(batches)
    params = [p for p in built.model.parameters() if p.requires_grad]
    optimizer = adamw(params, 3e-5, 0.0, torch.device("cpu"))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    settings = built.run.settings

    def step(i: int) -> None:
        train_step(stage, batches[i % len(batches)], params, optimizer, scheduler, None, settings,
                   torch.device("cpu"), None)  # fmt: skip

    return step, batches, built.encoder.model


def bare_side(path: str, batches: list[list[str]], length: int, weights: torch.nn.Module):  # noqa: ANN201
    """A function running one bare PyTorch step on the next batch (tokenized beforehand)."""
    from transformers import AutoTokenizer, BertModel

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = BertModel.from_pretrained(path, add_pooling_layer=False)
    model.load_state_dict(weights.state_dict(), strict=False)
    model.train()
    ready = []
    for batch in batches:
        encoded = tokenizer(
            batch + batch, truncation=True, max_length=length, padding=True, return_tensors="pt"
        )
        ready.append((encoded["input_ids"], encoded["attention_mask"]))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=3e-5, fused=True)

    def step(i: int) -> None:
        ids, mask = ready[i % len(ready)]
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        first, second = torch.nn.functional.normalize(pooled, dim=-1).chunk(2)
        logits = first @ second.T / TEMPERATURE
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(first)))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def timed(step, steps: int) -> float:  # noqa: ANN001
    """Seconds per step over `steps` steps, after 5 untimed ones."""
    for i in range(5):
        step(i)
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    data = resolve_data_dir()
    texts = list(wiki_sentences(data))[: args.batch_size * 40]
    with tempfile.TemporaryDirectory() as folder:
        path = tiny_bert(Path(folder), args.layers, args.hidden, data)
        harness, batches, weights = harness_side(path, texts, args.batch_size, args.length)
        bare = bare_side(path, batches, args.length, weights)
        ours, theirs = [], []
        for _ in range(args.repeats):
            ours.append(timed(harness, args.steps))
            theirs.append(timed(bare, args.steps))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(machine_header())
    print(f"BERT {args.layers} layer(s), hidden {args.hidden}; batch {args.batch_size} sentences x 2 views, "
          f"max {args.length} tokens; {args.steps} steps x {args.repeats} alternations, fp32")  # fmt: skip
    print(f"harness step {a * 1000:.2f} ms (runs {', '.join(f'{x * 1000:.2f}' for x in ours)})")
    print(f"bare PyTorch {b * 1000:.2f} ms (runs {', '.join(f'{x * 1000:.2f}' for x in theirs)})")
    print(f"harness / bare: {a / b:.2f}x")
    write_figures(args.json, f"bert-{args.layers}x{args.hidden}",
                  [{"harness_ms": a * 1000, "bare_ms": b * 1000, "ratio": a / b}])  # fmt: skip


if __name__ == "__main__":
    main()
