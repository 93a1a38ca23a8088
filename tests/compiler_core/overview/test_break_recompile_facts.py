"""The Overview's breaks and recompiles on real logs, each checked against the log's own records,
torch's own counters or the run's inputs, and the recompile limit on a real CPU compile."""

from __future__ import annotations

import re

import pytest

from compiler_core.analysis import import_trace
from compiler_core.overview import Level, build_overview
from compiler_core.session.refs import RefKind
from tests.compiler_core.overview.overview_logs import (
    SCRIPTS,
    corpus_log,
    corpus_meta,
    corpus_session,
    raw_records,
    traced_run,
)

_GB_CODE = re.compile(r"/gb/(gb\d+)\.html")


def test_breaks_match_the_logs_break_records_and_carry_their_fix() -> None:
    """HF generate(): every break the log records is counted once, each line's GB code, reason
    and first hint are those of a break record, and the ranking is by graphs split."""
    entry = "trouble_hf_generate_breaks"
    records = [payload for _, payload in raw_records(corpus_log(entry), "dynamo_graph_break_reason")]
    section = build_overview(corpus_session(entry)).section("breaks")
    assert section is not None
    counts = [int(m.group(1)) for f in section.facts if (m := re.search(r" ×(\d+):", f.text))]
    singles = sum(1 for f in section.facts if " ×" not in f.text)
    assert sum(counts) + singles == len(records) == 8
    assert section.headline.startswith("8 graph breaks from 4 causes")
    codes_in_log = {m.group(1).upper() for p in records for m in _GB_CODE.finditer(p)}
    for fact in section.facts:
        code, reason = fact.text.split(" ", 1)
        assert code in codes_in_log
        assert any(reason.split(" at ", 1)[0] in p for p in records), reason
        hint = fact.detail.split("\n")[0].removeprefix("Fix: ")
        assert any(f"Hint: {hint}" in p for p in records), hint
        assert fact.level is Level.WARNING
        assert {r.kind for r in fact.refs} == {RefKind.GRAPH_BREAK, RefKind.SOURCE_LINE}
    split = [int(re.search(r"splits (\d+) graph", f.text).group(1)) for f in section.facts]  # type: ignore[union-attr]
    assert split == sorted(split, reverse=True)


def test_recompile_names_the_failed_guard_the_line_that_made_it_and_the_fix() -> None:
    """GPT-2 at seq 32 then 48: the corpus records the steps' input shapes, and the log's guard
    tree quotes the line each guard came from."""
    entry = "trouble_recompile_seq"
    steps = corpus_meta(entry)["steps"]
    assert steps[0]["inputs"] == ["2x32 int64"] and steps[1]["inputs"] == ["2x48 int64"]
    overview = build_overview(corpus_session(entry))
    section = overview.section("recompiles")
    assert section is not None and section.headline == "1 recompile from 1 cause."
    (fact,) = section.facts
    assert fact.text.startswith("Recompiled 1×: input ids dim 1 changed 32 → 48")
    guards = "\n".join(p for _, p in raw_records(corpus_log(entry), "dynamo_cpp_guards_str"))
    quoted = re.search(r"TENSOR_MATCH: check_tensor\(L\['ids'\], .*?  # (?P<path>\S+\.py):(?P<line>\d+) in",
                       guards)
    assert quoted is not None
    detail = fact.detail.splitlines()
    assert detail[0] == "Guard that failed: check_tensor(L['ids'], …, size=[2, 32], stride=[32, 1])"
    assert detail[1].startswith(f"Guard made by {quoted['path']}:{quoted['line']}: ")
    assert detail[2].startswith("Fix: mark it dynamic: torch._dynamo.mark_dynamic(ids, 1)")
    kinds = {r.kind for r in fact.refs}
    assert {RefKind.COMPILE, RefKind.GUARD} <= kinds
    guard_ref = next(r for r in fact.refs if r.kind is RefKind.GUARD)
    first = corpus_session(entry).compile("0/0")
    assert first is not None and first.guards[guard_ref.index].code.startswith("check_tensor(L['ids'],")
    assert "1 recompile: input ids dim 1 changed" in overview.verdict


@pytest.mark.slow
def test_a_frame_past_the_recompile_limit_is_a_warning_that_it_runs_eagerly() -> None:
    """A real compile on this CPU: `scale(x, factor)` with a new float each call and the limit set
    to 2. torch's own warning on stderr and the log's failed compile are the truth."""
    run = traced_run("recompile_limit.py")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "hit config.recompile_limit (2)" in run.stderr
    metrics = [h["compilation_metrics"] for h, _ in raw_records(run.log, "compilation_metrics")]
    refused = [m for m in metrics if m.get("fail_reason") and "recompile limit exceeded" in m["fail_reason"]]
    compiled = [m for m in metrics if not m.get("fail_type")]
    assert len(refused) == 1 and len(compiled) == 2
    overview = build_overview(import_trace(run.log))
    section = overview.section("recompiles")
    assert section is not None
    limit = section.facts[0]
    assert limit.level is Level.WARNING
    assert limit.text == ("Frame recompile_limit.py:8 in scale hit Dynamo's recompile limit "
                          "(recompile_limit = 2) after 2 compiles: it now runs eagerly")
    assert "raise torch._dynamo.config.recompile_limit" in limit.detail
    # the refused attempt is no recompile: one happened (0/1), caused by the float's value
    assert section.headline == ("1 recompile from 1 cause; 1 frame hit the recompile limit and now runs "
                                "eagerly.")
    (cause,) = section.facts[1:]
    assert cause.text.startswith("Recompiled 1×: value of factor changed from 0.5")
    # the user stack under the reason names the script by its full path
    assert f"Guard made by {SCRIPTS / 'recompile_limit.py'}:9: return torch.relu(x) * factor" in cause.detail
    assert "hit the recompile limit" in overview.verdict


def test_recompile_limit_on_each_rank_is_one_frame_in_the_verdict() -> None:
    """FSDP2 on two ranks: the same decoder layer frame hits the limit on each rank's log."""
    folder = corpus_log("dist_fsdp_train")
    hits = {}
    for rank in (0, 1):
        metrics = raw_records(folder / f"dedicated_log_torch_trace_rank_{rank}.log.xz", "compilation_metrics")
        hits[rank] = [h["compilation_metrics"] for h, _ in metrics
                      if "recompile limit exceeded" in (h["compilation_metrics"].get("fail_reason") or "")]
    assert [len(h) for h in hits.values()] == [1, 1]
    overview = build_overview(corpus_session("dist_fsdp_train"))
    section = overview.section("recompiles")
    assert section is not None
    limits = [f for f in section.facts if "recompile limit" in f.text]
    assert [f.text.split(":", 1)[0] for f in limits] == ["rank 0", "rank 1"]
    for rank, fact in enumerate(limits):
        assert "hit Dynamo's recompile limit (recompile_limit = 8) after" in fact.text
        assert {r.rank for r in fact.refs} == {rank}
        assert hits[rank][0]["compile_id"] in {r.compile_id for r in fact.refs}
    assert "1 frame hit the recompile limit on 2 ranks and now runs eagerly" in overview.verdict
