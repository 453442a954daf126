"""The model of `supcl_seq` (harness.methods.supcl_seq): the encoder and the sentiment head; stage 1 the
supervised contrastive loss over the dropout views of each SST batch, stage 2 the linear probe on the
frozen encoder, in batches of `classifier_batch_size` (the authors' notebook's 112; None: the run's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from harness.data.cs224n import MultitaskData
from harness.encoders.dropout_views import ViewPasses, model_dropout, supcon_views
from harness.losses import cross_entropy
from harness.networks.tasks import TaskModel
from harness.registry import register_model
from harness.train.combiners import schedule
from harness.train.loop import Stage

if TYPE_CHECKING:
    from harness.encoders.encoder import Encoder
    from harness.encoders.heads import SentimentHead
    from harness.methods.supcl_seq import SupCLSeqParams


@register_model("supcl_seq")
class SupCLSeqModel(TaskModel):
    """SupCL-Seq's two stages over the encoder and its sentiment head."""

    encoder: Encoder  # always one here (the base class allows none)
    sentiment: SentimentHead  # always one here (TaskModel.init_heads)
    params: SupCLSeqParams

    def views_loss(self, rows: list[int], data: MultitaskData, passes: ViewPasses) -> dict[str, torch.Tensor]:
        texts = [data.sst_train.texts[i] for i in rows]
        labels = torch.as_tensor(data.sst_train.labels[rows], device=self.encoder.device)
        embed = lambda: self.encoder.embed(texts)  # noqa: E731
        return {"loss": supcon_views(self.encoder, self.params, passes, embed, labels)}

    def classifier_loss(self, rows: list[int], data: MultitaskData) -> dict[str, torch.Tensor]:
        self.encoder.eval()
        with torch.no_grad():
            features = self.encoder.embed([data.sst_train.texts[i] for i in rows])
        self.encoder.train()
        labels = torch.as_tensor(data.sst_train.labels[rows], device=features.device)
        return {"loss": cross_entropy(self.sentiment(features), labels)}

    def stages(self, config: Any, data: MultitaskData) -> list[Stage]:
        p = self.params

        def batches(size: int) -> Any:
            def sst(rng: Any) -> list[list[int]]:
                return [step["sst"] for step in schedule({"sst": len(data.sst_train)}, size, "single", rng)]

            return sst

        sst = batches(config.batch_size)
        probe = sst if p.classifier_batch_size is None else batches(p.classifier_batch_size)
        passes = ViewPasses(p, model_dropout(self.encoder))
        views = [lambda rows: self.views_loss(rows, data, passes)]
        return [
            Stage("supcon-views", sst, views, config.epochs, config.lr, config.max_steps,
                  scored=False),  # the classifier is still random: never the best
            Stage("linear-probe", probe, [lambda rows: self.classifier_loss(rows, data)], p.classifier_epochs,
                  p.classifier_lr, config.max_steps, trainable=lambda: list(self.sentiment.parameters())),
        ]  # fmt: skip
