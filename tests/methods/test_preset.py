"""Presets are data-level macros for `stages:` (harness.methods.preset): their flat fields are the stage
fields under other names, written into the template at resolution, logged as flat fields, read back."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.resolve.run_spec import resolve_run

PRESET_AND_PIPELINE = [
    (
        {"method": "contrastive_first", "contrastive": "sup_nli", "contrastive_lr": 1e-4, "temperature": 0.1,
         "hard_negative_weight": 1.0, "combiner": "pcgrad"},
        [{"contrastive": "sup_nli", "epochs": 1, "lr": 1e-4, "batch_size": 64, "max_steps": 0,
          "temperature": 0.1, "hard_negative_weight": 1.0}, {"finetune": "multitask", "combiner": "pcgrad"}],
    ),
    (
        {"method": "supervised_first", "combiner": "single", "single_task": "quora", "contrastive_limit": 9},
        [{"finetune": "quora"}, {"contrastive": "unsup", "epochs": 1, "lr": 3e-5, "batch_size": 64,
                                 "max_steps": 0, "limit": 9}],
    ),
    (
        {"method": "sup_simcse", "sup_data": "nli,quora", "quora_negatives": False, "length_grouping": True},
        [{"contrastive": "sup_nli", "length_grouping": True},
         {"contrastive": "sup_quora", "quora_negatives": False, "length_grouping": True}],
    ),
    ({"method": "frozen", "combiner": "batch_round_robin"},
     [{"finetune": "multitask", "combiner": "batch_round_robin", "heads_only": True}]),
    ({"method": "fusion", "temperature": 0.2}, [{"fusion": "multitask", "temperature": 0.2}]),
    ({"method": "unsup_simcse", "contrastive_data": ["sts", "glue:RTE"]},
     [{"contrastive": "unsup", "data": ["sts", "glue:RTE"]}]),
]  # fmt: skip


@pytest.mark.parametrize(("flat", "stages"), PRESET_AND_PIPELINE, ids=lambda x: str(x)[:40])
def test_a_preset_expands_to_the_stages_a_pipeline_writes_out(flat: dict, stages: list) -> None:
    preset = resolve_run(flat)
    pipeline = resolve_run({"method": "pipeline", "stages": stages})
    assert preset.stages == pipeline.stages
    assert preset.scorer is pipeline.scorer
    logged = preset.flat()
    assert "stages" not in logged and all(logged[k] == v or k == "sup_data" for k, v in flat.items())
    again = resolve_run(logged)  # the logged config (every flat field) reads back to the same stages
    assert again.stages == preset.stages and again.flat() == logged


def test_flat_fields_take_their_type_bounds_and_description_from_the_stage_field() -> None:
    from harness.registry import get_method

    fields = get_method("contrastive_first").Params.model_fields
    assert "stage's `lr`" in fields["contrastive_lr"].description
    assert fields["contrastive_lr"].default == 3e-5  # the preset's own schedule (Chen 4.2)
    with pytest.raises(HarnessError, match="field 'contrastive_lr': Input should be greater than 0"):
        resolve_run({"method": "contrastive_first", "contrastive_lr": -1.0})
    with pytest.raises(HarnessError, match="field 'temperature': Input should be greater than 0"):
        resolve_run({"method": "unsup_simcse", "temperature": 0})


def test_every_contrastive_variety_is_a_preset_choice_and_logs_what_its_stage_reads() -> None:
    """sup_pairs was missing from the composed presets' `contrastive` choices; its data default is its own."""
    run = resolve_run({"method": "contrastive_first", "contrastive": "sup_pairs"})
    (contrastive, _) = run.stages
    assert contrastive.contrastive == "sup_pairs" and contrastive.data == ["quora", "sts"]
    assert run.flat()["contrastive_data"] == ["quora", "sts"]  # the value the stage read, not unsup's wiki
    with pytest.raises(HarnessError, match="'contrastive_data' is not read by a 'sup_nli' contrastive stage"):
        resolve_run({"method": "contrastive_first", "contrastive": "sup_nli", "contrastive_data": ["sst"]})


def test_null_keeps_the_presets_own_value() -> None:
    """A config logged when `contrastive_max_steps` defaulted to null (no budget) still runs without one."""
    run = resolve_run({"method": "contrastive_first", "contrastive_max_steps": None, "max_steps": 5})
    assert run.stages[0].max_steps == 0 and run.stages[0].schedule(run.settings)[3] == 0
    assert run.stages[1].schedule(run.settings)[3] == 5


def test_a_cross_field_error_of_the_written_out_stages_names_no_stage_index() -> None:
    with pytest.raises(HarnessError) as error:
        resolve_run({"method": "fusion", "combiner": "pcgrad"})
    assert str(error.value).startswith("config: combiner 'pcgrad' cannot be used with fusion")
