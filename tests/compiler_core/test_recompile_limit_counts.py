"""A frame past Dynamo's recompile limit: the refused attempt carries a recompile reason, but
nothing recompiled (the frame runs eagerly from then on), so it is not counted as a recompile
and is no cause of its own. Oracle: the real FSDP job's logs read with `json` alone (per rank,
compilation_metrics records with a recompile reason and no failure)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.overview.recompile_facts import recompile_count
from compiler_core.queries.recompile_explain import distinct_recompiles
from compiler_core.queries.summary import summarize

JOB = Path(__file__).resolve().parents[2] / "bench" / "corpus" / "logs" / "dist_fsdp_train"


def _logged(log: Path) -> tuple[int, int]:
    """(recompiles that happened, attempts refused at the limit) of one rank's log."""
    done = refused = 0
    with lzma.open(log, "rt") as f:
        for line in f:
            if '"compilation_metrics"' not in line[:200]:
                continue
            m = json.loads(line[line.index("{"):])["compilation_metrics"]
            if not m.get("recompile_reason"):
                continue
            if m.get("fail_type"):
                refused += "recompile limit" in (m.get("fail_reason") or "")
            else:
                done += 1
    return done, refused


def test_attempts_refused_at_the_limit_are_not_recompiles() -> None:
    logged = [_logged(JOB / f"dedicated_log_torch_trace_rank_{r}.log.xz") for r in (0, 1)]
    assert all(refused == 1 for _, refused in logged)  # the shape this test is about
    recompiled = sum(done for done, _ in logged)
    session = import_trace(JOB)
    summary = summarize(session)
    assert summary["recompiles"] == recompile_count(session) == recompiled
    causes = distinct_recompiles(session, all_ranks=True)
    assert sum(c.count for c in causes) == recompiled
    assert all(c.file and c.line for c in causes)  # every cause is placed
