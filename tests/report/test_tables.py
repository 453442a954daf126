"""The report's LaTeX escaping: every special character of plain text survives LaTeX."""

from __future__ import annotations

from harness.report.tables import escape_latex


def test_every_latex_special_is_escaped_once() -> None:
    text = r"a_b & 5% $x #1 {y} ~z^ back\slash"
    assert escape_latex(text) == (
        r"a\_b \& 5\% \$x \#1 \{y\} \textasciitilde{}z\textasciicircum{} back\textbackslash{}slash"
    )
    assert escape_latex("plain words 0.5") == "plain words 0.5"
