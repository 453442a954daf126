"""Padding-free ("packed") forward pass of a BERT encoder: every token-wise layer (embeddings, Q/K/V and
output projections, feed-forward, LayerNorm, dropout) runs on the real tokens only, [tokens, hidden];
only attention sees the padded [batch, heads, length, head] layout, with a key-padding mask.

The arithmetic is BERT's (Devlin et al., 2019; transformers' `BertLayer`, post-LayerNorm):

    a = LN(h + Dropout(W_o Attention(W_q h, W_k h, W_v h)))
    h' = LN(a + Dropout(W_2 act(W_1 a)))

with the model's own modules and weights, so the result equals `BertModel(...)` up to float rounding
(tests/encoders/test_packed.py), and gradients flow to the same parameters. A batch of random sentences
padded to its longest wastes about a third of the compute of a padded forward (wiki1m at max length 32:
380,928 padded tokens per 260,875 real); packing skips that waste without changing which sentences
share a batch (in-batch negatives stay SimCSE's random ones).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from transformers import BertModel

# cuDNN's attention (PyTorch's first choice for bf16/fp16 on Hopper) builds a plan for every new sequence
# length; with length-sorted evaluation batches that cost more than it saved: STS suite on an H100,
# all-MiniLM-L6-v2 under bf16, 4.14 s with it vs 2.53 s without (fp32: 2.85 s). Same arithmetic.
ATTENTION_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


def supports_packing(model: Any) -> bool:
    """Whether `model` is a plain BERT encoder (absolute positions, no decoder or cross-attention)."""
    config = getattr(model, "config", None)
    return (
        isinstance(model, BertModel)
        and config is not None  # every BertModel has one
        and not config.is_decoder
        and not config.add_cross_attention
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
    )


def real_tokens(attention_mask: torch.Tensor) -> torch.Tensor | None:
    """The flat positions of the real tokens of a [batch, length] mask, or None when there is no padding
    (most batches of a token-count-sorted evaluation). Reads the mask's values: on a GPU tensor, a host
    sync (`TokenBatch` works it out on the CPU instead)."""
    mask = attention_mask.bool()
    return None if bool(mask.all()) else mask.reshape(-1).nonzero().squeeze(1)


class TokenBatch(dict):
    """Tokenized inputs moved to `device` (a dict, as a model's forward takes them) that also carry
    `index`, `real_tokens` of their attention mask, found on the CPU before the copy. The packed forward
    then reads nothing back from the GPU (the mask's `all()` and `nonzero()` were two host syncs a
    forward pass, each waiting for the previous step's kernels) and traces as one graph under
    torch.compile. A dict built from it (a slice, a filtered copy) is a plain dict: the forward finds
    the positions itself, with the same result."""

    def __init__(self, host: dict[str, torch.Tensor], device: torch.device) -> None:
        super().__init__({key: value.to(device, non_blocking=True) for key, value in host.items()})
        index = real_tokens(host["attention_mask"])
        self.index = None if index is None else index.to(device, non_blocking=True)
        self.longest = int(host["attention_mask"].sum(1).max()) if len(host["attention_mask"]) else 0


class Packing:
    """Where the real tokens of a [batch, length] mask sit in the flattened batch. A batch without
    padding packs by a reshape, and needs no attention mask. `padded`: every position is computed, the
    padding's too (a reshape, static shapes for a compiled step), and attention masks the padded keys."""

    def __init__(
        self, attention_mask: torch.Tensor, index: torch.Tensor | None, padded: bool = False
    ) -> None:
        self.batch, self.length = attention_mask.shape
        self.mask = attention_mask.bool()
        self.full = index is None
        self.index = None if padded else index
        self.key_mask = self.mask[:, None, None, :] if padded or not self.full else None

    def pack(self, padded: torch.Tensor) -> torch.Tensor:
        """[batch, length, ...] -> [tokens, ...]."""
        flat = padded.reshape(self.batch * self.length, *padded.shape[2:])
        return flat if self.index is None else flat.index_select(0, self.index)

    def unpack(self, packed: torch.Tensor) -> torch.Tensor:
        """[tokens, ...] -> [batch, length, ...] with zeros at the padding."""
        shape = (self.batch, self.length, *packed.shape[1:])
        if self.index is None:
            return packed.view(shape)
        flat = packed.new_zeros(self.batch * self.length, *packed.shape[1:])
        return flat.index_copy(0, self.index, packed).view(shape)


def dropout(
    x: torch.Tensor, module: torch.nn.Dropout, masks: Iterator[torch.Tensor] | None = None
) -> torch.Tensor:
    """Inverted dropout with `module`'s p, active in training: each element is zeroed with probability
    p and survivors are scaled by 1 / (1 - p), as `nn.Dropout`. The mask comes from `torch.rand` >= p,
    which on CPU is 2-3x faster than `bernoulli_` (the largest non-matmul cost of a training step).
    `masks`: the scales drawn beforehand (`dropout_masks`), taken in order instead of drawing."""
    if not module.training or module.p == 0.0:
        return x
    if module.p >= 1.0:  # nn.Dropout(p=1) zeroes everything; 1 / (1 - p) would be inf
        return torch.zeros_like(x)
    scale = next(masks) if masks is not None else _scale(x.shape, x.device, module.p)
    return x * scale.to(x.dtype)


def _scale(shape: torch.Size | tuple[int, ...], device: torch.device, p: float) -> torch.Tensor:
    return torch.rand(shape, device=device).ge_(p).mul_(1.0 / (1.0 - p))


def dropout_masks(model: BertModel, inputs: TokenBatch) -> list[torch.Tensor]:
    """The dropout scales the padding-free forward would draw for this batch unpadded to its longest row
    (the same `torch.rand` calls, shapes and order: embeddings, then per layer attention probabilities,
    attention output, feed-forward output), laid out for the padded form at the batch's width: a compiled
    step draws nothing itself, and trains with the eager step's masks (harness.encoders.compiled)."""
    batch, width = inputs["attention_mask"].shape
    longest, index, device = inputs.longest, inputs.index, inputs["attention_mask"].device
    real = batch * width if index is None else len(index)

    def tokens(module: torch.nn.Dropout, hidden: int) -> torch.Tensor | None:
        if not module.training or module.p == 0.0 or module.p >= 1.0:
            return None
        scale = _scale((real, hidden), device, module.p)
        return scale if index is None else scale.new_zeros(batch * width, hidden).index_copy_(0, index, scale)

    hidden = model.config.hidden_size
    drawn = [tokens(model.embeddings.dropout, hidden)]
    for layer in model.encoder.layer:
        attn = layer.attention.self
        if attn.training and 0.0 < attn.dropout.p < 1.0:
            probs = _scale((batch, attn.num_attention_heads, longest, longest), device, attn.dropout.p)
            padded = probs.new_zeros(batch, attn.num_attention_heads, width, width)
            padded[:, :, :longest, :longest] = probs
            drawn.append(padded)
        drawn += [tokens(layer.attention.output.dropout, hidden), tokens(layer.output.dropout, hidden)]
    return [m for m in drawn if m is not None]


def _embed(model: BertModel, inputs: dict[str, torch.Tensor], packing: Packing,
           masks: Iterator[torch.Tensor] | None = None) -> torch.Tensor:  # fmt: skip
    emb = model.embeddings
    positions = torch.arange(packing.length, device=packing.mask.device).expand(packing.batch, -1)
    types = inputs.get("token_type_ids")
    types = packing.pack(types if types is not None else torch.zeros_like(inputs["input_ids"]))
    h = (
        emb.word_embeddings(packing.pack(inputs["input_ids"]))
        + emb.token_type_embeddings(types)
        + emb.position_embeddings(packing.pack(positions))
    )
    return dropout(emb.LayerNorm(h), emb.dropout, masks)


def _attention(layer: Any, h: torch.Tensor, packing: Packing, masks: Iterator[torch.Tensor] | None = None
               ) -> torch.Tensor:  # fmt: skip
    attn = layer.attention.self
    heads, size = attn.num_attention_heads, attn.attention_head_size
    projections = (attn.query, attn.key, attn.value)
    weight = torch.cat([p.weight for p in projections])  # one [3 hidden, hidden] matmul instead of three
    qkv = packing.unpack(F.linear(h, weight, torch.cat([p.bias for p in projections])))
    q, k, v = qkv.view(packing.batch, packing.length, 3, heads, size).permute(2, 0, 3, 1, 4).unbind(0)
    if attn.training and attn.dropout.p > 0:  # softmax(q k^T / sqrt(d) + mask), dropout, times v
        scores = (q @ k.transpose(-1, -2)) * size**-0.5
        if packing.key_mask is not None:
            scores = scores.masked_fill(~packing.key_mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        context = dropout(probs, attn.dropout, masks) @ v
    else:
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=packing.key_mask, scale=size**-0.5)
    context = packing.pack(context.transpose(1, 2).reshape(packing.batch, packing.length, heads * size))
    out = layer.attention.output
    return out.LayerNorm(dropout(out.dense(context), out.dropout, masks) + h)


def packed_forward(
    model: BertModel,
    inputs: dict[str, torch.Tensor],
    all_layers: bool = False,
    pooler: bool = False,
    padded: bool = False,
    masks: list[torch.Tensor] | None = None,
) -> tuple[torch.Tensor, tuple[torch.Tensor, ...] | None, torch.Tensor | None]:
    """(last_hidden_state [batch, length, hidden] with zeros at padding, every layer's padded states when
    `all_layers` (embeddings first, as transformers' hidden_states), BERT's pooler output when `pooler`).
    `padded`: every position computed (`Packing`), the padding's states not zeroed (poolers mask them);
    the form torch.compile gets (harness.encoders.compiled), without the attention backend choice, which a
    compiled graph makes itself. `masks`: dropout scales drawn beforehand (`dropout_masks`), in order."""
    mask = inputs["attention_mask"]
    index = None if padded else inputs.index if isinstance(inputs, TokenBatch) else real_tokens(mask)
    packing = Packing(mask, index, padded)
    drawn = iter(masks) if masks is not None else None
    h = _embed(model, inputs, packing, drawn)
    layers = [h]
    with contextlib.nullcontext() if padded else sdpa_kernel(ATTENTION_BACKENDS):
        for layer in model.encoder.layer:
            a = _attention(layer, h, packing, drawn)
            inner = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(a))
            h = layer.output.LayerNorm(dropout(layer.output.dense(inner), layer.output.dropout, drawn) + a)
            layers.append(h)
    last = packing.unpack(h)
    hidden = tuple(packing.unpack(x) for x in layers) if all_layers else None
    pooled = model.pooler(last) if pooler and model.pooler is not None else None
    return last, hidden, pooled
