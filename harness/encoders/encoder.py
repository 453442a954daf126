"""A Hugging Face encoder plus a pooler: sentences in, one embedding per sentence out.

Poolers that turn token states into one sentence embedding (`pool`):
- `cls`: BERT's pooler output (dense + tanh over [CLS]) when the model has one, else the [CLS] state
  (SimCSE's `cls`).
- `cls_before_pooler`: the last layer's [CLS] state (how unsupervised SimCSE is evaluated).
- `mean`: mean of the last layer's token states over the attention mask (SBERT).
- `mean_no_cls`: the same mean without the first token, [CLS] (Liao 3: "pool the output token embeddings
  except the first [CLS] token"; [SEP] is an output token and stays). Liao's code
  (Danqi7/584-final@0e40add models.py:44, :65) also drops [CLS] but divides by the padded length (and
  at encoding time averages padding states too); the paper's mean over real tokens is what runs here.
- `model` (a run field's value, resolved by `Encoder`): the model's own sentence-transformers pipeline,
  one of the above then L2 normalisation where it has a Normalize module (harness.encoders.st_pipeline).
- `first_last_avg`: mean over the mask of (first layer + last layer) / 2, with the first layer being
  hidden_states[1], the first transformer layer's output (SimCSE's evaluation code).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoModel, AutoTokenizer
from transformers.utils import logging as hf_logging

from harness.choices import POOLINGS
from harness.encoders.compiled import bucket
from harness.encoders.location import MINILM_ALIASES, check_available, check_weights, resolve_model_name  # noqa: F401
from harness.encoders.packed import TokenBatch, dropout_masks, packed_forward, supports_packing
from harness.encoders.st_pipeline import model_pipeline
from harness.encoders.token_store import TokenStore
from harness.encoders.tokens import TOKEN_IDS, pad, pad_values, widened
from harness.errors import HarnessError

hf_logging.disable_progress_bar()  # per-trial "Loading weights" bars drown the harness's own bars


def mean_pool(states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """sum_t m_t h_t / sum_t m_t, computed in fp32."""
    mask = attention_mask.unsqueeze(-1).to(torch.float32)
    summed = (states.to(torch.float32) * mask).sum(dim=1)
    return summed / mask.sum(dim=1).clamp(min=1.0)


def pool(
    method: str,
    last_hidden_state: torch.Tensor,
    attention_mask: torch.Tensor,
    pooler_output: torch.Tensor | None = None,
    hidden_states: tuple[torch.Tensor, ...] | None = None,
) -> torch.Tensor:
    """Apply pooler `method` (one of POOLINGS) and return [batch, hidden] in fp32."""
    if method == "mean":
        return mean_pool(last_hidden_state, attention_mask)
    if method == "mean_no_cls":
        return mean_pool(last_hidden_state[:, 1:], attention_mask[:, 1:])
    if method == "first_last_avg":
        if hidden_states is None:
            raise ValueError("first_last_avg needs the model's hidden_states (output_hidden_states=True)")
        return mean_pool((hidden_states[1].float() + hidden_states[-1].float()) / 2.0, attention_mask)
    if method == "cls_before_pooler" or (method == "cls" and pooler_output is None):
        return last_hidden_state[:, 0].to(torch.float32)
    if method == "cls" and pooler_output is not None:  # without one, "cls" returned above
        return pooler_output.to(torch.float32)
    raise ValueError(f"unknown pooling {method!r}; choose one of {', '.join(POOLINGS)}")


def default_max_length(path: Path, config: object) -> int:
    """sentence-transformers' `max_seq_length` when the model ships one (256 for all-MiniLM-L6-v2),
    else 512, never more than the model's position embeddings."""
    limit = int(getattr(config, "max_position_embeddings", 512))
    st_config = path / "sentence_bert_config.json"
    if st_config.is_file():
        return min(limit, int(json.loads(st_config.read_text()).get("max_seq_length", limit)))
    return min(limit, 512)


# Where an attention module reads its dropout probability from a number fixed at init rather than an
# nn.Dropout: BERT's SDPA attention in transformers 4.x (`BertSdpaSelfAttention.dropout_prob`, read in
# forward as `dropout_p=self.dropout_prob`: 4.45.0 to 4.57.6, checked; 5.0.0 reads `self.dropout.p`), and
# many 5.x attention modules (`self.attention_dropout`, some `self.dropout` as a number). The harness's own
# BERT forward (harness.encoders.packed) reads the nn.Dropout; other architectures go through these.
DROPOUT_FLOATS = ("dropout_prob", "attention_dropout", "dropout_p", "attn_dropout", "dropout")


def set_dropout_floats(module: nn.Module, probability: float) -> None:
    """Set `module`'s own dropout probabilities kept as numbers (DROPOUT_FLOATS) to p."""
    for name in DROPOUT_FLOATS:
        value = module.__dict__.get(name)  # plain attributes only: submodules live in `_modules`
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            setattr(module, name, probability)


class Encoder(nn.Module):
    """AutoModel + tokenizer + pooling. `forward` takes tokenized inputs, `tokenize` makes them."""

    def __init__(
        self,
        model_name: str,
        pooling: str = "mean",
        max_length: int | None = 128,
        eval_length: int | Literal["training", "model"] = "training",
    ) -> None:
        """`pooling: model` embeds as the model's sentence-transformers modules do
        (harness.encoders.st_pipeline: their Pooling mode, then Normalize if listed); any other pooling is
        the harness's alone.
        `max_length` truncates training batches; `eval_length` the sentences an evaluation embeds
        (`token_ids`): `training` the same length, `model` the model's position limit (no truncation in
        practice: SimCSE's evaluation passes no max length), or a number."""
        super().__init__()
        check_available(model_name)  # a worker or `eval` never checked: one line, not the hub's retries
        path = resolve_model_name(model_name)
        check_weights(path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModel.from_pretrained(path)
        except OSError as exc:
            raise HarnessError(
                f"cannot load model {model_name!r} ({path}): {str(exc).splitlines()[0]}; "
                "give a local directory, a reachable hub id, or all-MiniLM-L6-v2"
            ) from exc
        self.source = path  # the tokenizer's files (the token-id cache's key)
        self.pooling, self.normalize = pooling, False
        self.embedding = f"{pooling} pooling"  # how it embeds, in words (recorded on the run)
        if pooling == "model":
            own = model_pipeline(path, model_name)
            self.pooling, self.normalize, self.embedding = own.pooling, own.normalize, own.description
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if max_length and limit and max_length > int(limit):
            raise HarnessError(
                f"max sequence length {max_length} is beyond {model_name!r}'s {limit} positions; "
                f"give {limit} or less"
            )
        self.max_length = max_length or default_max_length(Path(path), self.model.config)
        if isinstance(eval_length, int) and limit and eval_length > int(limit):
            raise HarnessError(
                f"evaluation length {eval_length} is beyond {model_name!r}'s {limit} positions; "
                f"give {limit} or less, or eval_max_seq_length: model"
            )
        # the tokens a sequence may hold: RoBERTa's 514 positions hold 512 (its tokenizer says so)
        usable = int(self.tokenizer.model_max_length) if self.tokenizer.model_max_length < 10**6 else None
        positions = min(n for n in (int(limit) if limit else None, usable, 4096) if n is not None)
        named = {"training": self.max_length, "model": positions}
        self.eval_length: int = named[eval_length] if isinstance(eval_length, str) else eval_length
        self.packing = supports_packing(self.model)
        self.store: TokenStore | None = None  # a stage's sentences, tokenized ahead of its loop
        self.buckets: list[int] | None = None  # training lengths padded to these (harness.encoders.compiled)
        self.compiled: Callable[..., torch.Tensor] | None = None  # the training forward, compiled

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def remember(self, sentences: Iterable[str]) -> None:
        """Tokenize `sentences` now (harness.encoders.token_store): `tokenize` then builds their batches from
        the stored ids, the same tensors without a tokenizer call."""
        if self.store is None:
            self.store = TokenStore(self.tokenizer, self.max_length)
        self.store.add(sentences)

    def tokenize(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Pad to the longest sentence in the batch (dynamic padding), truncated at max_length. Each
        distinct sentence is tokenized once and its row repeated (SimCSE's two views of a batch list every
        sentence twice): the same tensors as tokenizing the list, half the tokenizer's work there.
        Remembered sentences (`remember`) are not tokenized again."""
        listed = list(sentences)
        if self.store is not None and self.store.knows(listed):
            return TokenBatch(self.store.batch(listed, self._pad_to), self.device)
        distinct = list(dict.fromkeys(listed))
        batch = self.tokenizer(
            distinct, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        if len(distinct) < len(listed):
            row = {sentence: i for i, sentence in enumerate(distinct)}
            index = torch.tensor([row[sentence] for sentence in listed])
            batch = {k: v.index_select(0, index) for k, v in batch.items()}
        width = self._pad_to(batch["input_ids"].shape[1])
        if width > batch["input_ids"].shape[1]:
            batch = widened(batch, width, pad_values(self.tokenizer), self.tokenizer.padding_side)
        return TokenBatch(batch, self.device)

    def _pad_to(self, longest: int) -> int:
        """The length a training batch is padded to: its longest sentence, or that's length bucket when
        the training forward is compiled (static shapes)."""
        return bucket(longest, self.buckets) if self.buckets and self.training else longest

    def token_ids(self, sentences: Sequence[str]) -> dict[str, list[list[int]]]:
        """Tokenize an evaluation's sentences without padding (truncated at `eval_length`): the lists
        `collate` pads per batch. Made once per process for the same tokenizer, length and sentences
        (harness.encoders.tokens)."""

        def make() -> dict[str, list[list[int]]]:
            encoded = self.tokenizer(list(sentences), truncation=True, max_length=self.eval_length)
            return {key: list(values) for key, values in encoded.items()}

        identity = (
            self.source,
            type(self.tokenizer).__name__,
            self.tokenizer.truncation_side,
            self.eval_length,
        )
        return TOKEN_IDS.get(identity, sentences, make)

    def collate(self, features: dict[str, list[list[int]]]) -> dict[str, torch.Tensor]:
        """Pad pre-tokenized sentences to the longest of them and move them to the model's device."""
        return TokenBatch(pad(features, pad_values(self.tokenizer), self.tokenizer.padding_side), self.device)

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled embeddings [batch, hidden]; BERT encoders run padding-free (`harness.encoders.packed`)
        unless `packing` is switched off, other architectures through their own forward."""
        if self.compiled is not None and self.training:
            # the eager step's dropout masks, drawn here: the compiled graph draws nothing
            masks = (
                dropout_masks(self.model, inputs) if self.packing and isinstance(inputs, TokenBatch) else None
            )
            ids, mask, types = inputs["input_ids"], inputs["attention_mask"], inputs.get("token_type_ids")
            return self.compiled(ids, mask, types, masks)
        need_layers = self.pooling == "first_last_avg"
        if self.packing:
            last, layers, pooled = packed_forward(self.model, inputs, need_layers, self.pooling == "cls")
        else:
            out = self.model(**inputs, output_hidden_states=need_layers)
            last, layers, pooled = out.last_hidden_state, out.hidden_states, out.get("pooler_output")
        pooled = pool(self.pooling, last, inputs["attention_mask"], pooled, layers if need_layers else None)
        return F.normalize(pooled, dim=-1) if self.normalize else pooled

    def padded_forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                       token_type_ids: torch.Tensor | None = None,
                       masks: list[torch.Tensor] | None = None) -> torch.Tensor:  # fmt: skip
        """Pooled embeddings with every position computed (BERT's `padded` form with the dropout `masks`
        drawn beforehand, or the model's own forward): static shapes, the function
        `harness.encoders.compiled` compiles."""
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        need_layers = self.pooling == "first_last_avg"
        if self.packing:
            cls = self.pooling == "cls"
            last, layers, pooled = packed_forward(self.model, inputs, need_layers, cls, True, masks)
        else:
            out = self.model(**inputs, output_hidden_states=need_layers)
            last, layers, pooled = out.last_hidden_state, out.hidden_states, out.get("pooler_output")
        pooled = pool(self.pooling, last, attention_mask, pooled, layers if need_layers else None)
        return F.normalize(pooled, dim=-1) if self.normalize else pooled

    def set_dropout(self, probability: float) -> None:
        """Set every dropout in the transformer (hidden and attention-probability dropout) to p: each
        nn.Dropout, and the probabilities attention modules keep as numbers (`set_dropout_floats`)."""
        for module in self.model.modules():
            if isinstance(module, nn.Dropout):
                module.p = probability
            set_dropout_floats(module, probability)
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if hasattr(self.model.config, name):
                setattr(self.model.config, name, probability)

    def embed(self, sentences: Sequence[str]) -> torch.Tensor:
        """Tokenize and encode one batch of sentences (grad follows the caller's mode)."""
        return self(self.tokenize(sentences))

    def embed_pairs(self, first: Sequence[str], second: Sequence[str]) -> torch.Tensor:
        """Encode sentence pairs jointly, `[CLS] a [SEP] b [SEP]` with segment ids (BERT's sentence-pair
        input, Devlin et al. 2019, 3.2), pooled as configured; the pair is truncated at max_length,
        longest first."""
        batch = self.tokenizer(list(first), list(second), padding=True, truncation="longest_first",
                               max_length=self.max_length, return_tensors="pt")  # fmt: skip
        return self(TokenBatch(dict(batch), self.device))
