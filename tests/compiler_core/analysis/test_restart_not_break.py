"""A restart Dynamo makes for itself is not a graph break.

`trouble_dynamic_true` (bench/corpus, H100, torch 2.11: a Llama-style model under
`dynamic=True`) restarts its first compile once, with `TensorifyScalarRestartAnalysis`: the
frame still compiled whole. The log has no break artifact, torch's own `graph_break` counter
is absent from the run's counters, and `torch._dynamo.explain` (the metadata) counts 0 breaks:
the session must count 0 too, though `restart_reasons` names the restart.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs"


def _restart_reasons(log: Path) -> list[str]:
    reasons: list[str] = []
    with lzma.open(log, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            at = line.find('{"compilation_metrics"')
            if at >= 0 and not line.startswith("\t"):
                reasons += json.loads(line[at:])["compilation_metrics"].get("restart_reasons") or []
    return reasons


def test_tensorify_restart_is_no_break() -> None:
    log = CORPUS / "trouble_dynamic_true.log.xz"
    facts = json.loads((CORPUS / "trouble_dynamic_true.json").read_text())["oracle"]
    assert facts["explain"]["graph_break_count"] == 0
    assert "graph_break" not in facts["logged_run"]["process"]["counters"]
    assert any("TensorifyScalarRestartAnalysis" in r for r in _restart_reasons(log))
    summary = summarize(import_trace(log))
    assert summary["graph_breaks"] == 0 and summary["distinct_breaks"] == []
    assert summary["graphs"] == 2


def test_a_restart_naming_its_break_is_still_one() -> None:
    """A restart for a real break stays one: the data-dependent-branch log's compiles restart for
    their `.item()` breaks and break again at a `print`, three breaks in all."""
    summary = summarize(import_trace(CORPUS / "trouble_tv_data_branch_train.log.xz"))
    assert summary["graph_breaks"] == 3
