"""A method owns its model through the registry (harness.registry.MODELS): every declaration names a
registered nn.Module, an unknown name is refused with the known ones, and the pipeline presets are not
CS224N task methods (they train the heads only where a stage does)."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.methods.pipeline import PipelineMethod
from harness.methods.tasks import TaskMethod
from harness.networks.base import MethodModel
from harness.registry import METHODS, MODELS, get_model


def test_every_method_names_a_registered_model() -> None:
    models = MODELS.entries()
    for name, method in METHODS.entries().items():
        assert method.model in models, f"{name}: model {method.model!r} is not registered"
        assert (
            issubclass(models[method.model], MethodModel) and models[method.model].model_name == method.model
        )


def test_an_unknown_model_name_is_refused_with_the_known_ones() -> None:
    with pytest.raises(HarnessError, match=r"unknown method model 'pipelin'; did you mean pipeline"):
        get_model("pipelin")


def test_pipeline_methods_are_not_task_methods() -> None:
    pipelines = [name for name, method in METHODS.entries().items() if issubclass(method, PipelineMethod)]
    assert {"pipeline", "unsup_simcse", "multitask", "contrastive_first"} <= set(pipelines)
    assert not [name for name in pipelines if issubclass(METHODS.get(name), TaskMethod)]
