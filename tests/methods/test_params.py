"""Parameter groups: a method accepts exactly the fields it reads; impossible combinations are refused
with one line that names the field and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from harness.encoders.dropout_views import ViewPasses
from harness.errors import HarnessError
from harness.methods.supcl_seq import SupCLSeqParams
from harness.resolve.run_spec import resolve_run
from tests.helpers import harness_here


def test_views_are_dropout_probabilities_and_may_come_as_commas() -> None:
    assert SupCLSeqParams(views="0.0, 0.1").views == [0.0, 0.1]
    for bad in ("0.1,1.0", [0.1, -0.2]):
        with pytest.raises(ValidationError, match="views"):
            SupCLSeqParams(views=bad)


REFUSED = [
    ({"method": "fusion", "combiner": "pcgrad"}, "combiner 'pcgrad' cannot be used with fusion"),
    ({"method": "fusion", "contrastive_epochs": 2}, "field 'contrastive_epochs' is neither a run field"),
    ({"method": "supcl_seq", "combiner": "average"}, "field 'combiner' is neither a run field"),
    ({"method": "supcl_seq", "single_task": "sst"}, "field 'single_task' is neither a run field"),
    ({"method": "unsup_simcse", "contrastive_lr": 1e-5}, "field 'contrastive_lr' is neither a run field"),
    ({"method": "sup_simcse", "contrastive_epochs": 2}, "field 'contrastive_epochs' is neither a run field"),
    ({"method": "multitask", "single_task": "sts"}, "'single_task' is not read with combiner 'average'"),
    (
        {"method": "unsup_simcse", "save_embeddings": True},
        "field 'save_embeddings' saves the SST dev embeddings",
    ),
    (
        {"method": "contrastive_first", "contrastive": "unsup", "hard_negative_weight": 1.0},
        "'hard_negative_weight' is not read by a 'unsup' contrastive stage; remove it",
    ),
    (
        {"method": "sup_simcse", "sup_data": ["quora"], "hard_negative_weight": 1.0},
        "'hard_negative_weight' is not read by a 'sup_quora' contrastive stage; remove it",
    ),
]


@pytest.mark.parametrize(("fields", "message"), REFUSED, ids=lambda x: str(x)[:40])
def test_fields_a_method_does_not_read_are_refused(fields: dict, message: str) -> None:
    with pytest.raises(HarnessError, match="^config: ") as error:
        resolve_run(fields)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_the_same_fields_are_accepted_where_they_are_read() -> None:
    single = resolve_run({"method": "multitask", "combiner": "single", "single_task": "sts"})
    assert [s.model_dump() for s in single.stages] == [{"finetune": "sts", "heads_only": False}]
    assert single.flat()["combiner"] == "single" and single.flat()["single_task"] == "sts"  # as logged
    assert resolve_run({"method": "contrastive_first", "contrastive": "sup_nli", "hard_negative_weight": 1.0})
    assert resolve_run({"method": "fusion", "combiner": "batch_round_robin", "temperature": 0.1})


def test_a_refused_study_exits_2_with_one_line(tmp_path: Path) -> None:
    study = {"name": "refused", "base": {"method": "fusion", "combiner": "pcgrad"}, "profiles": {"paper": {}}}
    path = tmp_path / "refused.yaml"
    path.write_text(yaml.safe_dump(study))
    result = harness_here("run-study", str(path), "--no-progress")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "combiner 'pcgrad' cannot be used with fusion" in lines[0], result.stderr
    assert not (tmp_path / ".harness").exists()


def test_supcl_seq_defaults_follow_the_paper_and_the_authors_view_is_an_option(
    tiny_bert: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.data.cs224n import multitask_data
    from harness.encoders.encoder import Encoder

    run = resolve_run({"method": "supcl_seq", "views": [0.0, 0.2]})
    assert run.params.normalize is True and run.params.view_passes == "listed"  # footnote 2; section 2
    assert run.params.base_temperature is None
    for view_passes, views in (("listed", [0.0, 0.2]), ("authors_loop", [0.1, 0.0, 0.2])):
        run = resolve_run({"method": "supcl_seq", "views": [0.0, 0.2], "view_passes": view_passes})
        method = run.build(Encoder(str(tiny_bert), "cls", 32))
        seen: list[float] = []
        real = method.encoder.set_dropout
        monkeypatch.setattr(
            method.encoder, "set_dropout", lambda p, seen=seen, real=real: (seen.append(p), real(p))
        )
        passes = ViewPasses(run.params, 0.1)
        method.views_loss([0, 1, 2, 3], multitask_data(data_dir), passes)
        assert seen == [*views, 0.1]  # one forward per view, then the model's own dropout again


@pytest.mark.parametrize(("given", "probe"), [({}, 112), ({"classifier_batch_size": None}, 320)])
def test_supcl_seq_probe_batch_is_the_notebooks_total(
    tiny_bert: Path, data_dir: Path, given: dict, probe: int
) -> None:
    """Issue 42 item 4: the probe trains in batches of 112, the authors' notebook's total over 4 devices
    (hooman650/SupCL-Seq@320440f examples/glue_bert_base.ipynb cell 18's log, 28 a device); None: the run's
    batch."""
    import random

    from harness.data.cs224n import multitask_data
    from harness.encoders.encoder import Encoder

    run = resolve_run({"method": "supcl_seq", **given})
    method = run.build(Encoder(str(tiny_bert), "cls", 32))
    views, linear = method.stages(run.settings, multitask_data(data_dir))
    assert run.settings.batch_size == 320  # Table 4's SST-2 row: stage 1's batch
    assert {len(b) for b in views.make_batches(random.Random(0))[:-1]} == {320}
    assert {len(b) for b in linear.make_batches(random.Random(0))[:-1]} == {probe}
