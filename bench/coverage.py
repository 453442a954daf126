"""How often the harness's 95% intervals hold the true score (harness.stats.coverage): each design's
replicates are fresh simulated test sets (and seeds) scored and resampled by the harness's own code.

    .venv/bin/python bench/coverage.py [--replicates 1000] [--resamples 1000] [--designs NAME,...]
        [--json FILE]
    .venv/bin/python bench/coverage.py --exact

`--exact`: the few-seeds rule's own coverage, no bootstrap and no simulation, integrated over the seeds'
variance estimate's chi-square law (harness.stats.coverage.exact_coverage), for k = 2-10 seeds and ratios
A/B of the items' to the seeds' part from 0 (seeds alone) to 100 (items alone, nearly).

Per design: the share of replicates whose interval held the truth, +- 1.96 x its Monte Carlo standard
error (1,000 replicates: +-1.4 points at 95%, so a 2-point shortfall shows), and the mean interval width;
for two-level designs (k seeds) also without the few-seeds correction (`few_seeds_correction=False`: the
plain two-level bootstrap). Not a speed figure: the numbers do not depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import time

from harness.stats import coverage as c

DESIGNS = {
    "spearman": lambda: c.spearman(),
    "wmean": lambda: c.wmean(),
    "accuracy": lambda: c.accuracy(),
    "cv_accuracy": lambda: c.accuracy(cross_validated=True),
    **{f"accuracy_k{k}": (lambda k=k: c.accuracy(seeds=k)) for k in (2, 3, 5, 10)},
    "accuracy_k3_ratio1": lambda: c.accuracy(seeds=3, seed_ratio=1.0),
    "accuracy_k3_ratio0.3": lambda: c.accuracy(seeds=3, seed_ratio=0.3),
    "spearman_k3": lambda: c.spearman(seeds=3),
    "difference_k3": lambda: c.difference(seeds=3),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--designs", default=",".join(DESIGNS))
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument("--exact", action="store_true", help="the rule's exact coverage, then stop")
    args = parser.parse_args()
    if args.exact:
        ratios = (0, 0.03, 0.1, 0.3, 1, 3, 10, 100)
        print("seeds  " + " ".join(f"A/B={r:<5g}" for r in ratios) + "   min    max")
        for k in (2, 3, 4, 5, 10):
            shares = [100 * c.exact_coverage(k, r) for r in ratios]
            print(
                f"{k:5}  "
                + " ".join(f"{x:8.1f}%" for x in shares)
                + f" {min(shares):5.1f}% {max(shares):5.1f}%"
            )
        return
    rows = []
    print(f"{'design':40} {'seeds':>5} {'covered':>16} {'width':>7}  {'plain two-level':>16} {'width':>7}")
    for name in args.designs.split(","):
        design, started = DESIGNS[name](), time.perf_counter()
        ours = c.coverage(design, args.replicates, args.resamples)
        plain = (
            c.coverage(design, args.replicates, args.resamples, few_seeds_correction=False)
            if design.seeds > 1
            else None
        )
        row = {"design": name, "described": design.name, "seeds": design.seeds, "replicates": args.replicates,
               "covered": ours.covered, "se": ours.se, "width": ours.width,
               "plain_covered": plain and plain.covered, "plain_se": plain and plain.se,
               "plain_width": plain and plain.width}  # fmt: skip
        rows.append(row)
        shown = f"{100 * plain.covered:5.1f}% +- {196 * plain.se:3.1f} {plain.width:7.2f}" if plain else ""
        seconds = time.perf_counter() - started
        print(f"{design.name:40} {design.seeds:5} {100 * ours.covered:7.1f}% +- {196 * ours.se:3.1f} "
              f"{ours.width:7.2f}  {shown}   ({seconds:.0f} s)", flush=True)  # fmt: skip
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
