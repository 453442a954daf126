"""Training step at paper shapes and its model-FLOPs utilisation: the harness's loop vs Hugging Face's
Trainer and sentence-transformers' trainer, same model, same batch of B texts of exactly L tokens, one
process, one device (issue 25, item 3).

    .venv/bin/python bench/step_mfu.py [--model bert-base-uncased] [--batch-size 64] [--length 128]
        [--steps 20] [--precisions fp32,bf16] [--against hf,st] [--compile auto,false] [--json FILE]

The step is unsupervised SimCSE's (Gao et al. 2021, sec. 3): each text encoded twice with dropout (2B
sequences of L tokens), mean pooling, InfoNCE over the in-batch pairs at temperature 0.05, gradient
clipping at 1.0, AdamW. Harness: the `unsup_simcse` method's first loop stage through `train_step`
(bench/steps.py). HF Trainer: a BertModel wrapped to return the same loss, Trainer defaults otherwise
(its optimizer is printed). sentence-transformers: MultipleNegativesRankingLoss with scale 20 (= 1/0.05),
anchor = positive = the text. Every side tokenizes its batch each step (the Trainer's collator the B
texts). Both trainers are timed between consecutive step ends (synchronised on a GPU), so their data
loaders and callbacks are in the time; the harness's loop per synchronised `train_step` on premade
batches of texts; each after its first step, and on a GPU after a few seconds of matrix products (clocks
up). The harness trains no projection head here (`mlp_projection: false`), as the others have none. Where
the weights are not here, every side loads the same random model of the known config
(harness.encoders.standin: bert-base-uncased, google/bert_uncased_L-8_H-512_A-8, all-MiniLM-L6-v2).

`--compile CHOICES` (default `auto,false`): a harness row per value of the run field `compile`
(harness.encoders.compiled: `auto` compiles the training forward on a GPU, with CUDA graphs, batches padded to
length buckets; `false` is the eager, padding-free step). A compiled row is timed after its graphs are
compiled, and its compile time per batch shape is printed beside it (a trial compiles one per length
bucket it meets, at most 4 per batch size): at the trial's steps, amortised per step = that x 4 / steps.

MFU = harness.flops.train_step_flops(config, [L] * 2B) per second / the GPU's dense bf16 peak
(harness.flops.BF16_PEAK_TFLOPS, or --peak-tflops), for fp32 runs too; on a CPU only TFLOPS are printed.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any, NamedTuple

import torch
from steps import loop_step_seconds, machine_header, precision_label, write_figures

from harness.data.paths import resolve_data_dir
from harness.device import pick_device, resolve_precision
from harness.encoders.standin import local_model
from harness.flops import bf16_peak_tflops, train_step_flops
from harness.stages.contrastive.unsup import wiki_sentences

TEMPERATURE = 0.05


def fixed_length_texts(tokenizer: Any, sentences: list[str], count: int, length: int) -> list[str]:
    """`count` texts of consecutive wiki sentences, each at least `length` tokens with [CLS] and [SEP], so
    that truncation at `length` leaves exactly `length` real tokens (no padding on any side)."""
    texts, current = [], ""
    for sentence in sentences:
        current = f"{current} {sentence}".strip()
        if len(tokenizer(current, truncation=False)["input_ids"]) >= length:
            texts.append(current)
            current = ""
            if len(texts) == count:
                return texts
    raise SystemExit(f"the wiki sentences give only {len(texts)} texts of {length} tokens; ask for fewer")


def step_end_timer() -> Any:
    """A trainer callback that records the time of each step's end (after the GPU has finished it);
    `seconds()`: the mean gap between step ends, so the first step (the warm-up) is not counted."""
    from transformers import TrainerCallback

    class StepEnds(TrainerCallback):
        def __init__(self) -> None:
            self.ends: list[float] = []

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            self.ends.append(time.perf_counter())

        def seconds(self) -> float:
            gaps = [b - a for a, b in zip(self.ends, self.ends[1:], strict=False)]
            return sum(gaps) / len(gaps)

    return StepEnds()


def trainer_settings(out: str, batch_size: int, steps: int, precision: str) -> dict[str, Any]:
    """The training arguments both trainers get: `steps` + 1 steps (the first untimed), the precision."""
    resolved = resolve_precision(pick_device(), precision)
    return dict(
        output_dir=out, per_device_train_batch_size=batch_size, max_steps=steps + 1, learning_rate=3e-5,
        report_to="none", save_strategy="no", logging_strategy="no", dataloader_drop_last=True, seed=0,
        bf16=resolved == "bf16", fp16=resolved == "fp16", use_cpu=pick_device().type == "cpu",
    )  # fmt: skip


class Shape(NamedTuple):
    """What every side trains on: the model folder, the texts, tokens a text, texts a batch, timed steps."""

    path: str
    texts: list[str]
    length: int
    batch_size: int
    steps: int


def warm_up(device: torch.device, seconds: float = 3.0) -> None:
    """Matrix products for a few seconds, so that the first side is not timed while the GPU's clocks
    still rise from idle (345 MHz idle, 1980 MHz under load on this workplace's H200s)."""
    if device.type != "cuda":
        return
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        a @ a
        torch.cuda.synchronize(device)


def hf_trainer_step(shape: Shape, precision: str) -> tuple[float, str]:
    """Seconds per step of transformers' Trainer on the same SimCSE step; (seconds, its optimizer)."""
    path, texts, length, batch_size, steps = shape
    from datasets import Dataset
    from transformers import AutoModel, AutoTokenizer, Trainer, TrainingArguments

    class SimCSE(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(path, add_pooling_layer=False)

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor]:
            ids, mask = torch.cat([input_ids, input_ids]), torch.cat([attention_mask, attention_mask])
            hidden = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            first, second = torch.nn.functional.normalize(pooled.float(), dim=-1).chunk(2)
            logits = first @ second.T / TEMPERATURE
            return {
                "loss": torch.nn.functional.cross_entropy(logits, torch.arange(len(first), device=ids.device))
            }

    tokenizer = AutoTokenizer.from_pretrained(path)

    def collate(rows: list[dict[str, str]]) -> dict[str, torch.Tensor]:  # tokenized each step, as the others
        batch = tokenizer([r["text"] for r in rows], truncation=True, max_length=length, padding=True,
                          return_tensors="pt")  # fmt: skip
        return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}

    data = Dataset.from_dict({"text": texts})
    timer = step_end_timer()
    with tempfile.TemporaryDirectory() as out:
        arguments = TrainingArguments(
            **trainer_settings(out, batch_size, steps, precision), remove_unused_columns=False
        )  # the collator reads the text column
        trainer = Trainer(model=SimCSE(), args=arguments, train_dataset=data, data_collator=collate,
                          callbacks=[timer])  # fmt: skip
        trainer.train()
        return timer.seconds(), str(trainer.args.optim.value)


def sentence_transformers_step(shape: Shape, precision: str) -> tuple[float, str]:
    """Seconds per step of SentenceTransformerTrainer, MultipleNegativesRankingLoss (anchor = positive)."""
    path, texts, length, batch_size, steps = shape
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    model = SentenceTransformer(path, device=str(pick_device()))
    model.max_seq_length = length
    data = Dataset.from_dict({"anchor": texts, "positive": texts})
    timer = step_end_timer()
    with tempfile.TemporaryDirectory() as out:
        loss = MultipleNegativesRankingLoss(model, scale=1 / TEMPERATURE)
        arguments = SentenceTransformerTrainingArguments(
            **trainer_settings(out, batch_size, steps, precision)
        )
        trainer = SentenceTransformerTrainer(
            model=model, args=arguments, train_dataset=data, loss=loss, callbacks=[timer]
        )
        trainer.train()
        return timer.seconds(), str(trainer.args.optim.value)


def harness_step(shape: Shape, precision: str, compile_choice: str = "auto") -> tuple[float, Any, float]:
    """Seconds per step of the harness's loop with the run field `compile` set to `compile_choice`;
    (seconds, the model's config, seconds compiling one batch shape)."""
    from harness.methods.pipeline import PipelineData

    path, texts, length, batch_size, steps = shape
    choice: bool | str = {"true": True, "false": False}.get(compile_choice, compile_choice)
    config = {"method": "unsup_simcse", "model": path, "pooling": "mean", "max_seq_length": length,
              "batch_size": batch_size, "precision": precision, "temperature": TEMPERATURE,
              "mlp_projection": False, "compile": choice}  # fmt: skip
    seconds, built = loop_step_seconds(config, steps, PipelineData(None, [texts]))
    return seconds, built.encoder.model.config, built.compile_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bert-base-uncased", help="a local folder, alias or known config")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--length", type=int, default=128, help="tokens per text, [CLS] and [SEP] included")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (after one warm-up step)")
    parser.add_argument("--precisions", default=None, help="default: fp32,bf16 on a GPU, fp32,auto on a CPU")
    parser.add_argument(
        "--against", default="hf,st", help="references: hf (Trainer), st (sentence-transformers)"
    )
    parser.add_argument("--compile", default="auto,false", help="the harness's `compile` values to time")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the device's dense bf16 peak")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    device = pick_device()
    path, note = local_model(args.model, resolve_data_dir())
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    count = args.batch_size * (args.steps + 2)
    texts = fixed_length_texts(tokenizer, list(wiki_sentences(resolve_data_dir())), count, args.length)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    peak = args.peak_tflops or (bf16_peak_tflops(name) if device.type == "cuda" else None)
    print(machine_header())
    print(
        f"model {args.model}{f' ({note})' if note else ''}; batch {args.batch_size} x {args.length} "
        f"tokens, two views: {2 * args.batch_size} sequences a step; bf16 peak: {peak or 'unknown'} TFLOPS"
    )
    precisions = (args.precisions or ("fp32,bf16" if device.type == "cuda" else "fp32,auto")).split(",")
    shape = Shape(path, texts, args.length, args.batch_size, args.steps)
    warm_up(device)
    rows = []
    for precision in precisions:
        sides, seconds, config = [], None, None
        for choice in filter(None, args.compile.split(",")):
            secs, config, compiling = harness_step(shape, precision, choice)
            seconds = seconds or secs
            sides.append((f"harness compile={choice}", secs, "adamw_torch_fused", compiling))
        flops = train_step_flops(config, [args.length] * (2 * args.batch_size))
        if "hf" in args.against:
            sides.append(("HF Trainer", *hf_trainer_step(shape, precision), 0.0))
        if "st" in args.against:
            sides.append(("sentence-transformers", *sentence_transformers_step(shape, precision), 0.0))
        for side, secs, optimizer, compiling in sides:
            tflops = flops / secs / 1e12
            mfu = f"{100 * tflops / peak:.1f}%" if peak else "n/a"
            row = {"side": side, "precision": precision_label(precision), "device": name,
                   "batch": args.batch_size, "length": args.length, "seconds_per_step": secs,
                   "tflops": tflops, "mfu": mfu, "optimizer": optimizer,
                   "compile_seconds_per_shape": compiling}  # fmt: skip
            rows.append(row)
            compiled = f", compiling {compiling:.1f} s a shape" if compiling else ""
            print(f"{side:24s} {row['precision']:12s} {secs * 1000:9.1f} ms/step  {tflops:7.2f} TFLOPS  "
                  f"MFU {mfu:>6s}  {secs / seconds:.2f}x the first row's time  "
                  f"({optimizer}{compiled})")  # fmt: skip
    write_figures(args.json, args.model, rows)


if __name__ == "__main__":
    main()
