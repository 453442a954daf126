import random
from pathlib import Path

import pytest

from harness.train.combiners import schedule

SIZES = {"sst": 50, "quora": 200, "sts": 20}


def test_average_downsamples_to_the_smallest_task() -> None:
    steps = schedule(SIZES, 8, "average", random.Random(0))
    assert len(steps) == 3 and all(set(s) == {"sst", "quora", "sts"} for s in steps)  # ceil(20 / 8)
    assert len({i for s in steps for i in s["quora"]}) == 3 * 8  # distinct, down-sampled quora rows


def test_batch_round_robin_cycles_tasks() -> None:
    steps = schedule(SIZES, 8, "batch_round_robin", random.Random(0))
    assert [next(iter(s)) for s in steps] == ["sst", "quora", "sts"] * 3


def test_epoch_round_robin_uses_full_sets_in_order() -> None:
    steps = schedule(SIZES, 10, "epoch_round_robin", random.Random(0))
    assert [next(iter(s)) for s in steps] == ["sst"] * 5 + ["quora"] * 20 + ["sts"] * 2
    assert sorted(i for s in steps if "quora" in s for i in s["quora"]) == list(range(200))


@pytest.mark.parametrize("task", ["sst", "quora", "sts"])
def test_single_task(task: str) -> None:
    steps = schedule(SIZES, 10, "single", random.Random(0), task)
    assert all(list(s) == [task] for s in steps) and len(steps) == -(-SIZES[task] // 10)


def test_the_combiner_table_gives_each_finetune_stage_its_schedule_and_backward_rule(data_dir: Path) -> None:
    from harness.config import RunConfig
    from harness.data.cs224n import multitask_data
    from harness.stages.finetune import FinetuneStage
    from harness.train.combiners import COMBINERS

    data = multitask_data(data_dir)
    for name, rule in COMBINERS.items():
        spec = (
            FinetuneStage(finetune="sts")
            if rule.single
            else FinetuneStage(finetune="multitask", combiner=name)
        )
        stage = spec.build(None, RunConfig(batch_size=32), data)  # building needs no modules
        assert stage.combine == rule.backward == ("pcgrad" if name == "pcgrad" else "sum")
        steps = stage.make_batches(random.Random(0))
        tasks = {task for step in steps for task in step}
        assert tasks == ({"sts"} if rule.single else {"sst", "quora", "sts"})
