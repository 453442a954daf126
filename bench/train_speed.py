"""Training speed: one unsupervised SimCSE step of all-MiniLM-L6-v2 at batch 64 (max length 32), the
harness's loop vs sentence-transformers' trainer with MultipleNegativesRankingLoss, same sentences
(the local wiki1m head), same machine, one run.

    .venv/bin/python bench/train_speed.py [--steps 20] [--batch-size 64] [--model DIR]

sentence-transformers: SentenceTransformerTrainer, anchor = positive = the sentence (SimCSE), its default
precision (fp32); time = train_runtime / steps. Harness: the `unsup_simcse` method's stage (random
batches as SimCSE's, both dropout passes in one padding-free forward, fused AdamW), timed per step after
one warm-up step, in fp32 and with `auto` (what `harness.device.resolve_precision` picks here).
"""

from __future__ import annotations

import argparse
import os
import tempfile

from steps import loop_step_seconds, machine_header, precision_label

from harness.data.paths import resolve_data_dir
from harness.device import pick_device
from harness.encoders.encoder import resolve_model_name
from harness.stages.contrastive.unsup import wiki_sentences


def harness_step(model_name: str, steps: int, batch_size: int, precision: str) -> float:
    config = {"method": "unsup_simcse", "model": model_name, "pooling": "mean", "max_seq_length": 32,
              "batch_size": batch_size, "precision": precision}  # fmt: skip
    return loop_step_seconds(config, steps)[0]


def sentence_transformers_step(model_name: str, sentences: list[str], steps: int, batch_size: int) -> float:
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    model = SentenceTransformer(resolve_model_name(model_name), device=str(pick_device()))
    model.max_seq_length = 32
    data = Dataset.from_dict(
        {"anchor": sentences[: batch_size * steps], "positive": sentences[: batch_size * steps]}
    )
    with tempfile.TemporaryDirectory() as out:
        args = SentenceTransformerTrainingArguments(
            output_dir=out, per_device_train_batch_size=batch_size, max_steps=steps, learning_rate=3e-5,
            report_to="none", save_strategy="no", logging_steps=steps, dataloader_drop_last=True, seed=0,
        )  # fmt: skip
        loss = MultipleNegativesRankingLoss(model, scale=20.0)
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss)
        return trainer.train().metrics["train_runtime"] / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="model directory or alias (mean pooling)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sentences = list(wiki_sentences(resolve_data_dir()))
    print(machine_header())
    reference = sentence_transformers_step(args.model, sentences, args.steps, args.batch_size)
    print(f"sentence-transformers trainer + MNRL (fp32): {reference:.3f} s/step")
    for precision in ("fp32", "auto"):
        ours = harness_step(args.model, args.steps, args.batch_size, precision)
        label = precision_label(precision)
        print(f"harness unsup_simcse step ({label}): {ours:.3f} s/step  speed-up {reference / ours:.2f}x")


if __name__ == "__main__":
    main()
