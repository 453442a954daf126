"""What the papers' own numbers say of each claim as worded (harness.report.paper_support): by hand for
each kind, and over every claim of every shipped report spec, where the paper's tables decide every one."""

from __future__ import annotations

from pathlib import Path

from harness.report.claim_spec import BestClaim, CompareClaim, EquivalentClaim, GainClaim, TrendClaim
from harness.report.paper_support import CONTRADICTS, PARTLY, SUPPORTS, TIE, UNKNOWN, paper_says
from harness.report.paper_values import PaperRow, paper_rows
from harness.report.spec import REPORTS_DIR, load_spec

M = "STS12-16.wmean"
ROWS = [
    PaperRow({"tau": t}, v, "Table 7")
    for t, v in (("0.1", 61.61), ("0.3", 66.12), ("0.5", 66.0), ("1.0", 70.05))
]


def test_a_comparison_reads_its_own_paper_values_first_then_the_tables() -> None:
    claim = CompareClaim(id="c", source="s", text="t", metric=M, better={"tau": 1.0}, worse={"tau": 0.1})
    assert paper_says(claim, ROWS) == (SUPPORTS, "")
    assert paper_says(claim.model_copy(update={"paper": (60.0, 61.0)}), ROWS)[0] == CONTRADICTS
    assert paper_says(claim.model_copy(update={"paper": (61.0, 61.0)}), ROWS)[0] == TIE
    assert paper_says(claim, [])[0] == UNKNOWN


def test_a_best_claim_is_contradicted_by_a_higher_cell_of_the_papers_grid() -> None:
    best = BestClaim(id="b", kind="best", source="s", text="t", metric=M, by=["tau"], best={"tau": 1.0})
    assert paper_says(best, ROWS) == (SUPPORTS, "")
    says, note = paper_says(best.model_copy(update={"best": {"tau": 0.3}}), ROWS)
    assert says == CONTRADICTS and note == "the paper's 1.0: 70.05 against 66.12"
    level = [*ROWS, PaperRow({"tau": "0.7"}, 70.05, "Table 7")]
    assert paper_says(best, level)[0] == TIE  # another cell as high: not support


def test_a_trend_is_partly_supported_when_only_its_ends_agree() -> None:
    rising = TrendClaim(
        id="r", kind="trend", source="s", text="t", metric=M, by="tau", direction="increasing"
    )
    says, note = paper_says(rising, ROWS)
    assert says == PARTLY and note == "against it: 0.3 to 0.5: 66.12 to 66"
    assert paper_says(rising, [r for r in ROWS if r.params["tau"] != "0.5"]) == (SUPPORTS, "")
    assert paper_says(rising.model_copy(update={"direction": "decreasing"}), ROWS)[0] == CONTRADICTS


def test_the_papers_numbers_decide_every_shipped_claim() -> None:
    """Claims kept as worded where the papers' own tables go against them: Liao's "increasing lambda tends
    to decrease" (Table 4 rises from 0.3 to 0.5) and its "consistently outperform" the cross-entropy
    baselines (four pairs of Tables 2-3 go the other way), SupCL-Seq's "clear improvements on CoLA when
    more masks are applied" (Table 1 falls from 3 to 4 views) and its SST-2 against the augmented model
    (93.2 < 93.4, inside its "almost all"), Chen's ensemble "best in all 3 tasks" (Quora a tie, 0.836
    both), and David et al.'s "the improvements mainly go towards the Paraphrase Detection task" (Table 4's
    STS r rises by 0.133, paraphrase accuracy by 0.055). Every other claim is supported; none is undecided."""
    said = {}
    for path in sorted(Path(REPORTS_DIR).glob("*.yaml")):
        spec = load_spec(path.stem)
        for claim in spec.claims:
            said[claim.id] = paper_says(claim, paper_rows(spec.tables, claim.metric), spec.margins())[0]
    against = {claim: says for claim, says in said.items() if says != SUPPORTS}
    assert against == {
        "lambda_decreases_transfer": PARTLY,
        "CoLA_rises_with_views": PARTLY,
        "supcl_seq_beats_augmented_SST-2_acc": CONTRADICTS,
        "3p3n_lambda0.5_beats_sbert_sts": CONTRADICTS,
        "3p3n_lambda1.0_beats_sbert_sts": CONTRADICTS,
        "3p3n_lambda1.0_beats_allpalln_augment_transfer": CONTRADICTS,
        "allpalln_lambda1.0_beats_allpalln_augment_transfer": CONTRADICTS,
        "ensemble_beats_single_quora_paraphrase": TIE,
        "multitask_gain_mainly_paraphrase": CONTRADICTS,
    }
    assert len(said) == 188


def test_a_gain_and_an_equivalence_against_the_papers_numbers() -> None:
    than = {"metric": "transfer.avg", "better": {"tau": 1.0}, "worse": {"tau": 0.1}}
    gain = GainClaim(id="g", kind="gain", source="s", text="t", metric=M, better={"tau": 1.0},
                     worse={"tau": 0.1}, than=than, paper=((70.44, 67.61), (76.64, 75.56)))  # fmt: skip
    assert paper_says(gain, []) == (SUPPORTS, "")  # +2.83 against +1.08
    smaller = gain.model_copy(update={"paper": ((70.0, 69.5), (76.64, 75.56))})
    assert paper_says(smaller, [])[0] == CONTRADICTS
    same = EquivalentClaim(id="e", kind="equivalent", source="s", text="t", metric="dev.overall",
                           better={"v": "nli"}, worse={"v": "3_given"}, paper=(0.661, 0.664))  # fmt: skip
    assert paper_says(same, []) == (SUPPORTS, "")  # 0.003 apart, within the fractions' +-0.02
    apart = same.model_copy(update={"paper": (0.60, 0.664)})
    assert paper_says(apart, []) == (CONTRADICTS, "0.064 apart, beyond +-0.02")
