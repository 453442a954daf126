"""SupCL-Seq on GLUE: the `glue_supcon` stage (STS-B's rounded classes, the loss over dropout views), the
pipeline contrastive stage + linear probe end to end, the self-supervised probe on a task's own
sentences (Table 3) and the Dropout Augmented baseline (`glue` with `dropout_views`, Table 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from harness.data.glue import read_glue, supcon_labels
from harness.encoders.dropout_views import model_dropout
from harness.encoders.encoder import Encoder
from harness.errors import HarnessError
from harness.losses import supcon
from harness.resolve.run_spec import resolve_run
from harness.resolve.study_spec import load_study
from harness.stages.glue import glue_embed, glue_loss, glue_outputs
from harness.stages.registry import parse_stage
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from tests.helpers import child_runs, tiny_study

ROWS = [0, 1, 2, 3, 100, 200, 300, 400]


def built(tiny_bert: Path, data_dir: Path, stages: list[dict], **fields: Any) -> tuple[Any, Any, list]:
    """The run, its method on the tiny BERT and each stage's (spec, training data)."""
    run = resolve_run({"method": "pipeline", "model": str(tiny_bert), "pooling": "cls", "stages": stages,
                       **fields})  # fmt: skip
    method = run.build(Encoder(str(tiny_bert), "cls", 32)).train()  # as the loop trains it
    specs = list(run.stages)
    return run, method, [(spec, spec.load(run.sources(data_dir))) for spec in specs]


def test_stsb_classes_are_the_scores_rounded_to_one_decimal(data_dir: Path) -> None:
    """SupCL-Seq footnote 3: "we rounded to first decimal digit and grouped by similar labels"."""
    scores = read_glue(data_dir, "STS-B", "train").targets
    classes = supcon_labels("STS-B", scores)
    rounded = [round(float(s), 1) for s in scores]
    assert classes.dtype == np.int64 and np.allclose(classes / 10, rounded)
    assert len(np.unique(classes)) == len(set(rounded)) < len(np.unique(scores))  # grouped
    cola = read_glue(data_dir, "CoLA", "train").targets
    assert np.array_equal(supcon_labels("CoLA", cola), cola)  # a classification task: its labels


@pytest.mark.parametrize("task", ["CoLA", "STS-B"])
def test_the_loss_is_supcon_on_the_stacked_views(task: str, tiny_bert: Path, data_dir: Path) -> None:
    """With dropout 0 everywhere every view is the same embedding (pairs encoded jointly), so the stage's
    loss is supcon on that embedding stacked once per view, with the task's (rounded) labels."""
    views = [0.0, 0.0, 0.0]
    run, method, [(spec, data)] = built(tiny_bert, data_dir, [{"glue_supcon": task, "views": views}])
    method.encoder.set_dropout(0.0)
    loss = spec.build(method.context(), run.settings, data).updates[0](ROWS)["loss"]
    with torch.no_grad():
        z = glue_embed(method.encoder, data, ROWS)
    assert (data.second is not None) == (task == "STS-B") and z.shape == (len(ROWS), 32)
    labels = torch.as_tensor(supcon_labels(task, data.targets[ROWS]))
    expected = supcon(z.unsqueeze(1).expand(-1, len(views), -1), labels, temperature=0.05)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert loss.requires_grad  # the encoder is trained


def test_one_forward_per_view_then_the_models_own_dropout(
    tiny_bert: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stages = [{"glue_supcon": "RTE", "views": [0.0, 0.2]}]
    run, method, [(spec, data)] = built(tiny_bert, data_dir, stages)
    seen: list[float] = []
    real = method.encoder.set_dropout
    monkeypatch.setattr(method.encoder, "set_dropout", lambda p: (seen.append(p), real(p)))
    spec.build(method.context(), run.settings, data).updates[0](ROWS)
    assert seen == [0.0, 0.2, 0.1]  # the listed views (the paper's text), then the model's own restored


class AuthorsLoopModel:
    """A rewrite of the authors' training loop's dropout handling (hooman650/SupCL-Seq@320440f
    src/SupCsTrainer.py:63-94, `def_drop_out=0.1` as in examples/glue_bert_base.ipynb cell 12) over a model
    that only records the dropout of each forward pass."""

    def __init__(self) -> None:
        self.p = 0.1  # BERT's configured dropout
        self.forwards: list[float] = []

    def __call__(self) -> None:
        self.forwards.append(self.p)

    def compute_loss(self, w_drop_out: list[float], def_drop_out: float = 0.1) -> None:
        self()  # :66 "Default p = 0.1": whatever the model is at now
        for p_dpr in w_drop_out:  # :76
            if p_dpr != def_drop_out:  # :78-79
                self.p = p_dpr
            self()  # :84
        if p_dpr != def_drop_out:  # :94 (p_dpr: the loop's last entry)
            self.p = 0.1


STUDY_VIEW_LISTS = [  # every list in studies/supcl_seq_views.yaml and supcl_seq_glue.yaml (Tables 1, 4)
    [0.0, 0.1, 0.2, 0.3, 0.4], [0.0, 0.1, 0.2, 0.3], [0.0, 0.1, 0.2], [0.0, 0.1], [0.1, 0.1],
    [0.0, 0.05, 0.1, 0.2], [0.0, 0.2], [0.0, 0.2, 0.3, 0.4, 0.5],
]  # fmt: skip


def test_the_study_view_lists_are_all_the_studies_use() -> None:
    import yaml

    used = set()
    for name in ("supcl_seq_views", "supcl_seq_glue"):
        study = yaml.safe_load((Path("studies") / f"{name}.yaml").read_text())
        for fields in study["variants"].values():
            used |= {tuple(s["views"]) for s in fields["stages"] if "views" in s}
    assert used == {tuple(v) for v in STUDY_VIEW_LISTS}


@pytest.mark.parametrize("views", STUDY_VIEW_LISTS, ids=str)
def test_authors_loop_runs_the_dropouts_of_the_authors_code(
    views: list[float], tiny_bert: Path, data_dir: Path
) -> None:
    """Three batches through the stage: the dropout of every forward pass equals the rewritten loop's
    (e.g. [0.0, 0.1, 0.2] runs 0.1, 0.0, 0.0, 0.2; [0.0, 0.1] stays at 0.0 from the second batch on)."""
    authors = AuthorsLoopModel()
    for _ in range(3):
        authors.compute_loss(views)
    stages = [{"glue_supcon": "RTE", "views": views, "view_passes": "authors_loop"}]
    run, method, [(spec, data)] = built(tiny_bert, data_dir, stages)
    forwards: list[float] = []
    encoder = method.encoder  # each forward's dropout (every dropout module is at one probability)
    encoder.register_forward_pre_hook(lambda *_: forwards.append(model_dropout(encoder)))
    update = spec.build(method.context(), run.settings, data).updates[0]
    for _ in range(3):
        update(ROWS)
    assert forwards == authors.forwards
    assert model_dropout(method.encoder) == 0.1  # between batches the encoder is at its own dropout


@pytest.mark.slow
def test_supcl_seq_then_the_probe_on_cola_end_to_end(tmp_path: Path, tiny_bert: Path) -> None:
    stages = [
        {"glue_supcon": "CoLA", "views": [0.0, 0.1, 0.2], "max_steps": 2, "lr": 5e-5},
        {"glue": "CoLA", "heads_only": True, "max_steps": 2, "lr": 1e-3},
    ]
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="supcl-cola", method="pipeline", stages=stages,
                      pooling="cls", batch_size=8)  # fmt: skip
    run_study(load_study(path), progress=False)
    (run,) = child_runs("supcl-cola")
    assert run.info.status == "FINISHED" and metrics_of(run)["train.steps"] == 4
    assert -100 <= metrics_of(run)["dev.CoLA.mcc"] <= 100 and "dev.CoLA.acc" in metrics_of(run)


@pytest.mark.slow
def test_the_self_supervised_probe_reads_the_tasks_own_sentences(tmp_path: Path, tiny_bert: Path,
                                                                 data_dir: Path) -> None:  # fmt: skip
    """Table 3: unsupervised SimCSE on the task's train sentences (both of each pair), then the probe."""
    stages = [{"contrastive": "unsup", "data": ["glue:RTE"]}, {"glue": "RTE", "heads_only": True}]
    _, _, [(_, sentences), _] = built(tiny_bert, data_dir, stages)
    rte = read_glue(data_dir, "RTE", "train")
    assert sentences == sorted(set(rte.first + rte.second)) and len(sentences) > len(rte)
    stages = [{"contrastive": "unsup", "data": ["glue:RTE"], "limit": 32, "max_steps": 2},
              {"glue": "RTE", "heads_only": True, "max_steps": 2, "lr": 1e-3}]  # fmt: skip
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="unsup-rte", method="pipeline", stages=stages,
                      pooling="cls", batch_size=8)  # fmt: skip
    run_study(load_study(path), progress=False)
    (run,) = child_runs("unsup-rte")
    assert run.info.status == "FINISHED" and metrics_of(run)["train.steps"] == 4
    assert 0 <= metrics_of(run)["dev.RTE.acc"] <= 100


def test_dropout_views_average_the_loss_over_one_forward_per_view(tiny_bert: Path, data_dir: Path) -> None:
    """The Dropout Augmented baseline: L = (CE(view at p = 0) + CE(view at p = 0.5)) / 2."""
    stages = [{"glue": "MRPC", "dropout_views": [0.0, 0.5]}]
    run, method, [(spec, data)] = built(tiny_bert, data_dir, stages)
    targets = torch.as_tensor(data.targets[ROWS])
    torch.manual_seed(3)
    per_view = []
    for p in (0.0, 0.5):
        method.encoder.set_dropout(p)
        per_view.append(
            glue_loss(glue_outputs(method.context(), "MRPC", data, ROWS), targets, regression=False)
        )
    method.encoder.set_dropout(0.1)
    torch.manual_seed(3)
    loss = spec.build(method.context(), run.settings, data).updates[0](ROWS)["loss"]
    assert per_view[0].item() != pytest.approx(per_view[1].item())  # the views differ
    assert loss.item() == pytest.approx((per_view[0] + per_view[1]).item() / 2, rel=1e-5)
    assert model_dropout(method.encoder) == 0.1  # the model's own dropout is back
    standard = resolve_run({"method": "pipeline", "stages": [{"glue": "MRPC"}]})
    assert list(standard.stages)[0].dropout_views is None
    assert "dropout_views" not in standard.flat()["stages"][0]  # the standard stage logs as before


def test_table_4s_stage_reads_back_from_its_logged_form_and_glue_fields_need_a_glue_stage() -> None:
    stages = [{"glue_supcon": "MRPC", "views": [0.0, 0.05, 0.1, 0.2], "lr": 1e-4, "batch_size": 128,
               "epochs": 5}, {"glue": "MRPC", "heads_only": True}]  # fmt: skip
    run = resolve_run({"method": "pipeline", "pooling": "cls", "stages": stages})
    assert run.scorer.name == "glue" and run.flat()["stages"][0] == {
        "glue_supcon": "MRPC", "views": [0.0, 0.05, 0.1, 0.2], "temperature": 0.05, "normalize": True,
        "view_passes": "listed", "epochs": 5, "lr": 1e-4, "batch_size": 128,
    }  # fmt: skip
    logged = [parse_stage(stage) for stage in run.flat()["stages"]]
    assert logged == list(run.stages)  # each stage reads back from its logged form
    with pytest.raises(HarnessError, match="'glue_source' is not read without a stage that reads a GLUE"):
        resolve_run({"method": "pipeline", "stages": [{"contrastive": "unsup"}], "glue_source": "hub"})
    with pytest.raises(HarnessError, match="'glue_dir' is not read with glue_source: hub"):
        resolve_run({"method": "pipeline", "stages": stages, "glue_source": "hub", "glue_dir": "/glue"})
