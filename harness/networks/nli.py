"""The model of `scl` and `sbert` (harness.methods.scl, sbert): SBERT's NLI classifier over (u, v, |u - v|)
and Liao's loss, L = (1 - lambda) * L_CE + lambda * L_SCL (or L_aug); formulas and sources in
harness/methods/scl.py and harness/losses/nli_supcon.py, nli_augment.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

from harness.data.nli import ENTAILMENT, LABELS, NLIGroup, file_order_batches, pack_batches
from harness.encoders.heads import NLIClassifier
from harness.fields import parse_selection
from harness.losses import nli_supervised_contrastive
from harness.losses.nli_augment import nli_augmented_cross_entropy
from harness.networks.base import MethodModel
from harness.registry import register_model
from harness.train.loop import Stage

if TYPE_CHECKING:
    from harness.encoders.encoder import Encoder
    from harness.methods.base import Method
    from harness.methods.scl import SCLParams


@register_model("nli")
class NLIModel(MethodModel):
    """The encoder and the NLI classifier, trained on SNLI groups (a premise and its hypotheses)."""

    encoder: Encoder  # always one here (the base class allows none)
    params: SCLParams

    def __init__(self, encoder: Encoder, params: SCLParams, method: type[Method], specs: tuple = ()) -> None:
        super().__init__(encoder, params, method, specs)
        self.classifier = NLIClassifier(encoder.hidden_size, params.classifier)
        self.max_pos, self.max_neg = parse_selection(params.selection)

    def stages(self, config: Any, data: Sequence[NLIGroup]) -> list[Stage]:
        if self.params.nli_batches == "file_order":
            fixed = file_order_batches(data, config.batch_size)  # the same every epoch: no shuffle

            def batches(rng: Any) -> list[list[NLIGroup]]:
                return fixed
        else:

            def batches(rng: Any) -> list[list[NLIGroup]]:
                return pack_batches(data, config.batch_size, rng)

        return [Stage(self.name, batches, [self.loss], config.epochs, config.lr, config.max_steps)]

    def loss(self, batch: list[NLIGroup]) -> dict[str, torch.Tensor]:
        premises = [g.premise for g in batch]
        hypotheses = [h for g in batch for h in g.hypotheses]
        owner = torch.tensor([i for i, g in enumerate(batch) for _ in g.hypotheses])
        labels = torch.tensor([label for g in batch for label in g.labels])
        device = self.encoder.device
        owner, labels = owner.to(device, non_blocking=True), labels.to(device, non_blocking=True)

        embeddings = self.encoder.embed(premises + hypotheses)
        anchors, candidates = embeddings[: len(premises)], embeddings[len(premises) :]
        lam = self.params.lam
        parts: dict[str, torch.Tensor] = {}
        total = torch.zeros((), device=device)
        if lam < 1.0:
            logits = self.classifier(anchors[owner], candidates)
            parts["loss_ce"] = F.cross_entropy(logits.float(), labels)
            total = total + (1.0 - lam) * parts["loss_ce"]
        if lam > 0.0 and self.params.contrastive_term == "augment":
            parts["loss_aug"] = nli_augmented_cross_entropy(
                self.classifier,
                anchors,
                candidates,
                owner,
                labels,
                self.max_pos,
                self.max_neg,
                anchor_per=self.params.anchors,
                draw=self.params.draw,
                entailment=ENTAILMENT,
                contradiction=LABELS["contradiction"],
            )
            total = total + lam * parts["loss_aug"]
        elif lam > 0.0:
            parts["loss_scl"] = nli_supervised_contrastive(
                anchors,
                candidates,
                owner,
                labels == ENTAILMENT,
                self.params.temperature,
                self.max_pos,
                self.max_neg,
                self.params.normalize,
                anchor_per=self.params.anchors,
                draw=self.params.draw,
            )
            total = total + lam * parts["loss_scl"]
        return {"loss": total, **parts}
