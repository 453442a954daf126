"""A wrong report spec is one line naming the place and the fix (issue 41 item 3)."""

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.report import spec as spec_module

SPEC = """study: s
title: S
tables:
  - name: t
    kind: runs
    columns: {STS-B: STSBenchmark.spearman}
    label: "tau = {tau}"
"""


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("    label:", "     label:", "s.yaml:7:6: not valid YAML: expected <block end>, but found "
         "'<block mapping start>' (check the indentation of that line)"),
        ("title: S", "titel: S", "s.yaml: unknown field 'titel'; did you mean title?"),
        ("study: s", "studdy: s", "s.yaml: unknown field 'studdy'; did you mean study?"),
        ("    label:", "    colour: red\n    label:",
         "s.yaml: tables[0]: unknown field 'colour'; did you mean columns?"),
        ("{STS-B: STSBenchmark.spearman}", "[STSBenchmark.spearman]",
         "s.yaml: tables[0]: field 'columns': Input should be a valid dictionary (got ['STSB"),
        ("kind: runs", "kind: rnus", "s.yaml: tables[0]: unknown report part kind 'rnus'; did you mean runs"),
    ],
)  # fmt: skip
def test_a_wrong_spec_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, message: str
) -> None:
    assert old in SPEC
    (tmp_path / "s.yaml").write_text(SPEC.replace(old, new))
    monkeypatch.setattr(spec_module, "REPORTS_DIR", tmp_path)
    with pytest.raises(HarnessError) as error:
        spec_module.load_spec("s")
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)
