import random
from pathlib import Path

import pytest

from harness.data.nli import LABELS, group_pairs, pack_batches, read_snli_local
from harness.errors import HarnessError


@pytest.mark.parametrize(("split", "pairs"), [("dev", 9842), ("test", 9824)])
def test_snli_local_pair_counts(data_dir: Path, split: str, pairs: int) -> None:
    groups = read_snli_local(data_dir, [split])
    assert sum(len(g) for g in groups) == pairs
    assert len(groups) < pairs / 2  # premises come with several hypotheses
    assert {label for g in groups for label in g.labels} == set(LABELS.values())
    assert len({g.premise for g in groups}) == len(groups)


def test_group_pairs_keeps_order_and_labels() -> None:
    groups = group_pairs([("p", "h1", 0), ("q", "h2", 2), ("p", "h3", 1)])
    assert [g.premise for g in groups] == ["p", "q"]
    assert groups[0].hypotheses == ("h1", "h3") and groups[0].labels == (0, 1)


def test_pack_batches_covers_every_group_within_budget(data_dir: Path) -> None:
    groups = read_snli_local(data_dir, ["dev"])
    batches = pack_batches(groups, 64, random.Random(0))
    assert sorted(g.premise for b in batches for g in b) == sorted(g.premise for g in groups)
    assert all(sum(len(g) for g in b) <= 64 for b in batches)
    assert pack_batches(groups, 64, random.Random(0)) == batches
    assert pack_batches(groups, 64, random.Random(1)) != batches


def test_unknown_label_names_the_line(tmp_path: Path) -> None:
    snli = tmp_path / "senteval" / "SNLI"
    snli.mkdir(parents=True)
    (snli / "s1.dev").write_text("a\nb\n")
    (snli / "s2.dev").write_text("c\nd\n")
    (snli / "labels.dev").write_text("entailment\nmaybe\n")
    with pytest.raises(HarnessError, match=r"labels.dev:2: unknown label 'maybe'"):
        read_snli_local(tmp_path, ["dev"])


def test_file_order_batches_cut_the_pairs_every_batch_size_rows_in_order(data_dir: Path) -> None:
    """Liao's loader: SNLI's rows in order, 64 a batch, unshuffled; a group a cut falls in is split."""
    from harness.data.nli import file_order_batches

    groups = read_snli_local(data_dir, ["dev"])
    batches = file_order_batches(groups, 64)
    rows = [(g.premise, h, lab) for g in groups for h, lab in zip(g.hypotheses, g.labels, strict=True)]
    flat = [
        (g.premise, h, lab) for b in batches for g in b for h, lab in zip(g.hypotheses, g.labels, strict=True)
    ]
    assert flat == rows  # every pair once, in the data's order
    assert (
        all(sum(len(g) for g in b) == 64 for b in batches[:-1]) and 0 < sum(len(g) for g in batches[-1]) <= 64
    )
    split = sum(b[-1].premise == nxt[0].premise for b, nxt in zip(batches, batches[1:], strict=False))
    assert split > 0  # SNLI's groups of 3 do not divide 64: some are cut
    assert all(len({g.premise for g in b}) == len(b) for b in batches)  # a premise once per batch


def test_liaos_methods_batch_in_file_order_unless_told(data_dir: Path) -> None:
    import random as stdlib_random

    from harness.methods.scl import SCLParams, SupervisedContrastiveNLI
    from harness.networks.nli import NLIModel

    groups = read_snli_local(data_dir, ["dev"])[:100]

    class Config:
        batch_size, epochs, lr, max_steps = 64, 1, 2e-5, None

    for batches, shuffled in (("file_order", False), ("premise_groups", True)):
        model = NLIModel.__new__(NLIModel)
        model.params, model.method = SCLParams(nli_batches=batches), SupervisedContrastiveNLI
        stage = model.stages(Config(), groups)[0]
        one, two = stage.make_batches(stdlib_random.Random(0)), stage.make_batches(stdlib_random.Random(1))
        assert (one != two) == shuffled
