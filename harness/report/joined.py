"""`harness report A B ...`: several studies' finished runs in one table (an origin beside the studies
derived from it, two ablations of one setting). Their runs are put together and labelled by every param
that differs between them, so a row is one configuration whatever study ran it: runs of one configuration
in two studies are pooled as its seeds (they are the same configuration), and a setting one study changed
(`max_steps 3 -> 4`) is part of the label. Studies that share no score cannot share a table."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from harness.errors import HarnessError
from harness.tracking.study_runs import trial_frame
from harness.tracking.tracker import Tracker

JOINED = "+"  # `harness report A B` writes reports/build/A+B/


def joined_name(studies: Sequence[str]) -> str:
    return JOINED.join(studies)


def joined_frame(tracker: Tracker, studies: Sequence[str], profile: str | None) -> tuple[pd.DataFrame, list]:
    """The studies' finished runs in one frame, and their parent runs in order; an error where several
    share no score. One study: its frame as it is."""
    if len(studies) == 1:
        frame, parent = trial_frame(tracker, studies[0], profile)
        return frame, [parent]
    frames, parents = [], []
    for study in studies:
        frame, parent = trial_frame(tracker, study, profile)
        frames.append(frame.assign(study=study))
        parents.append(parent)
    scores = [{c for c in frame.columns if "." in c and not c.startswith("train.")} for frame in frames]
    shared = set.intersection(*scores)
    if not shared:
        raise HarnessError(
            f"{' and '.join(studies)} share no score, so no table can hold them; report them one by one"
        )
    return pd.concat(frames, ignore_index=True, sort=False), parents


def differing(params: list[str]) -> list[str]:
    """`params` without `study`: a study's name is no setting; what differs between studies is in the
    params they ran with."""
    return [p for p in params if p != "study"]
