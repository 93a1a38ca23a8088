"""The ranks' facts as `summary` prints them: what differs, which ranks agree, who is slow.

One function so the CLI, the Overview and the tests read the same keys: `rank_divergence` (a
list, empty when every rank agrees), `rank_groups` (the same said in one line), `stragglers`
(a list, empty when no rank is consistently slowest or last to arrive) and `rank_skew` (per-step
skew and arrival lag, compile-time skew: what that verdict rests on).
"""

from __future__ import annotations

from typing import Any

from compiler_core.ranks.rank_divergence import rank_divergence, session_ranks
from compiler_core.ranks.rank_sets import groups_text, rank_groups
from compiler_core.ranks.stragglers import straggler_report
from compiler_core.session.model import Session


def ranks_summary(session: Session) -> dict[str, Any]:
    diffs = rank_divergence(session)
    report = straggler_report(session).as_dict()
    return {
        "rank_divergence": [d.as_dict() for d in diffs],
        "rank_groups": groups_text(rank_groups(session_ranks(session), diffs)),
        "stragglers": report.pop("stragglers"),
        "rank_skew": report,
    }
