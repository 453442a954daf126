"""`harness new`: the method's fields listed in comments, each description whole (issue 41 item 2: a fixed
cut once ended a comment mid-word), and a study that loads and resolves for every registered method."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness.registry import METHODS
from harness.resolve.study_spec import load_study

FIELD = re.compile(r"^  # (?P<name>[A-Za-z_]+): (?P<value>.*?)(?:  # (?P<text>.*))?$")
MORE = re.compile(r"^  #\s+# (?P<text>.*)$")


def _described(text: str) -> dict[str, str]:
    """{field: its description} read back from the commented field lines and their continuation lines."""
    found: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        if (more := MORE.match(line)) and last is not None:
            found[last] += " " + more["text"]
        elif field := FIELD.match(line):
            last = field["name"]
            found[last] = field["text"] or ""
        else:
            last = None
    return found


@pytest.mark.parametrize("method", sorted(METHODS.entries()))
def test_every_description_is_whole_and_the_study_resolves(tmp_path: Path, method: str) -> None:
    from harness.commands.new_study import WIDTH, write_study

    path, _ = write_study(f"my_{method}", method, str(tmp_path / f"my_{method}.yaml"))
    text = path.read_text()
    loaded = yaml.safe_load(text)
    assert loaded["name"] == f"my_{method}" and loaded["base"]["method"] == method
    params = METHODS.entries()[method].Params.model_fields
    expected = {
        field.alias or key: " ".join((field.description or "").split())
        for key, field in params.items()
        if (field.alias or key) not in loaded["base"] and not field.is_required()
    }
    assert _described(text) == expected  # every word of every description, none cut
    for line in (line for line in text.splitlines() if FIELD.match(line) or MORE.match(line)):  # wrapped
        assert len(line) <= WIDTH, line
    study = load_study(str(path))
    assert study.profile == "base" and study.n_trials >= 1


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS.entries()))
def test_an_uncommented_field_line_is_the_field_at_its_default(tmp_path: Path, method: str) -> None:
    """`uncomment a field's line to change it`: each line, uncommented, is a YAML field (its description a
    comment still) with the method's default, and the study still resolves."""
    from harness.commands.new_study import write_study

    path, _ = write_study(f"my_{method}", method, str(tmp_path / "study.yaml"))
    text = path.read_text()
    params = {f.alias or k: f for k, f in METHODS.entries()[method].Params.model_fields.items()}
    for line in text.splitlines():
        if not (field := FIELD.match(line)) or field["name"] not in params:
            continue
        changed = tmp_path / f"{field['name']}.yaml"
        changed.write_text(text.replace(line, "  " + line.removeprefix("  # "), 1))
        base = yaml.safe_load(changed.read_text())["base"]
        default = params[field["name"]].get_default(call_default_factory=True)
        assert base[field["name"]] == yaml.safe_load(yaml.safe_dump(default)), field["name"]
        load_study(str(changed))


@pytest.mark.parametrize("name", ["a/b", "..", "my study", "a\\b"])
def test_new_and_run_study_refuse_a_name_by_the_same_rule_in_the_same_words(
    tmp_path: Path, name: str
) -> None:
    """Issue 41 item 3: `new` once had a rule of its own (no '.'), in other words than run-study's."""
    from tests.helpers import harness_here

    new = harness_here("new", name, "--method", "scl", "--out", str(tmp_path / "new.yaml"))
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({"name": name, "base": {"method": "scl"}}))
    run = harness_here("run-study", str(study), "--dry-run")
    assert new.returncode == run.returncode == 2 and not (tmp_path / "new.yaml").exists()
    rule = "use letters, digits, '_', '-' and '.' (not '.' or '..' alone)"
    said = f"study name {name!r} is not a plain name: {rule}"
    assert new.stderr == f"error: {said}\n" and run.stderr == f"error: {study}: {said}\n"


def test_new_accepts_every_name_run_study_accepts(tmp_path: Path) -> None:
    from harness.commands.new_study import write_study

    path, _ = write_study("my.study-2_b", "scl", str(tmp_path / "my.study-2_b.yaml"))
    assert load_study(str(path)).name == "my.study-2_b"
