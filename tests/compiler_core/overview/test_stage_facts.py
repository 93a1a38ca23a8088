"""The Overview's stage sections on real logs: fallbacks against torch's own GEMM counters and
the output code, compile time against torch's compile metrics, CUDA-graph skips against the
capture's records, ranks and runs against the per-rank logs and torch's counters before and
after `torch._dynamo.reset()`, saved bytes against the tensors' shapes."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.overview import Level, build_overview
from compiler_core.queries.summary import summarize
from compiler_core.session import load
from compiler_core.session.refs import RefKind
from tests.compiler_core.overview.overview_logs import corpus_log, corpus_meta, corpus_session, raw_records
from tests.conftest import FIXTURES, ROOT, SHARED_TRACES

_COUNT = re.compile(r" ×(\d+)$")


def test_fallbacks_count_the_calls_torch_counted_and_say_why() -> None:
    entry = "trouble_recompile_seq"  # GPT-2, two compiles: cuBLAS GEMMs and SDPA fallbacks
    counters = corpus_meta(entry)["oracle"]["logged_run"]["process"]["counters"]["aten_mm_info"]
    by_op = Counter({op: 0 for op in ("mm", "addmm")})
    for key, n in counters.items():
        by_op[key.split(".", 1)[1].split("_", 1)[0]] += n  # "aten.addmm_64_1152_384" → addmm
    section = build_overview(corpus_session(entry)).section("fallbacks")
    assert section is not None
    shown = {f.text.rsplit(" ×", 1)[0]: f for f in section.facts}
    for op in ("mm", "addmm"):
        fact = shown[f"extern_kernels.{op}"]
        assert int(_COUNT.search(fact.text).group(1)) == by_op[op] > 0  # type: ignore[union-attr]
        assert fact.level is Level.INFO and fact.detail.startswith("library kernel")
        assert all(r.kind is RefKind.KERNEL for r in fact.refs) and len(fact.refs) == by_op[op]
    code = "\n".join(p for _, p in raw_records(corpus_log(entry), "inductor_output_code"))
    sdpa = "torch.ops.aten._scaled_dot_product_efficient_attention.default"
    fact = shown[sdpa]
    assert fact.level is Level.WARNING and fact.detail.startswith("ATen fallback")
    assert int(_COUNT.search(fact.text).group(1)) == code.count(f"{sdpa}(") > 0  # type: ignore[union-attr]
    assert section.headline.endswith(f"{code.count(f'{sdpa}(')} of them ATen fallbacks.")


def test_compile_time_is_torchs_own_frame_compile_time() -> None:
    entry = "trouble_recompile_seq"
    metrics = [h["compilation_metrics"] for h, _ in raw_records(corpus_log(entry), "compilation_metrics")]
    total = sum(m["entire_frame_compile_time_s"] or 0.0 for m in metrics)
    section = build_overview(corpus_session(entry)).section("compile_time")
    assert section is not None
    assert section.headline == f"{total:.1f} s compiling 2 compiles."
    slowest = max(metrics, key=lambda m: m["entire_frame_compile_time_s"] or 0.0)
    assert section.facts[1].text.startswith(f"{slowest['compile_id']} forward: "
                                            f"{slowest['entire_frame_compile_time_s']:.1f} s")  # fmt: skip


def test_cudagraph_skip_names_inductors_reason_and_the_users_line() -> None:
    log = FIXTURES / "traces" / "cudagraph_skip_h100_torch211.log.gz"
    records = raw_records(log, "compilescope_cudagraphs")
    skips = [e for _, p in records for e in json.loads(p)["events"] if e["kind"] == "skip"]
    assert skips and "mutated inputs" in skips[0]["message"]
    overview = build_overview(import_trace(log))
    section = overview.section("cudagraphs")
    assert section is not None
    assert section.headline == "0 of 1 partition captured into CUDA graphs, 1 skipped."
    (fact,) = section.facts
    line = re.search(r'line (\d+), in forward', skips[0]["message"])
    assert line is not None
    assert fact.text == f"0/0 inference: skipped, mutated inputs (1 instances) at cudagraph_skip.py:{line[1]}"
    assert fact.level is Level.WARNING and "1 partition skipped CUDA graphs" in overview.verdict


def test_ranks_each_get_a_line_counted_from_their_own_log() -> None:
    folder = corpus_log("dist_ddp_train")
    assert isinstance(folder, Path) and folder.is_dir()
    section = build_overview(corpus_session("dist_ddp_train")).section("ranks")
    assert section is not None and section.headline == "2 ranks: the same graphs and breaks in each."
    for rank, fact in enumerate(section.facts):
        log = folder / f"dedicated_log_torch_trace_rank_{rank}.log.xz"
        metrics = raw_records(log, "compilation_metrics")
        compiles = {h["compilation_metrics"]["compile_id"] for h, _ in metrics}
        breaks = len(raw_records(log, "dynamo_graph_break_reason"))
        assert fact.text.startswith(f"rank {rank}: {len(compiles)} compiles, ")
        assert f", {breaks} graph breaks, " in fact.text
        assert {r.rank for r in fact.refs} == {rank}


def test_runs_of_one_log_each_get_a_line_matching_torchs_counters() -> None:
    """`torch._dynamo.reset()` between two compiles: torch's unique-graph counter before the
    reset is run 1's, and after it both runs'."""
    entry = "trouble_reset_twice"
    oracle = corpus_meta(entry)["oracle"]
    before = oracle["logged_run_before_reset"]["unique_graphs"]
    after = oracle["logged_run"]["process"]["unique_graphs"]
    section = build_overview(corpus_session(entry)).section("runs")
    assert section is not None and len(section.facts) == 2
    graphs = [int(re.search(r", (\d+) graphs?,", f.text).group(1)) for f in section.facts]  # type: ignore[union-attr]
    assert graphs[0] == before and sum(graphs) == after
    assert [f.text.split(":")[0] for f in section.facts] == ["run 1", "run 2"]


def test_saved_activations_add_up_from_the_tensors_shapes() -> None:
    """The bundled transformer block (batch 4, 16 tokens, width 64, fp32): each line's bytes are
    its tensors' element counts times 4, parameters and inputs are apart, the total is summary's."""
    session = load(ROOT / "resources" / "sessions" / "transformer_block.json")
    section = build_overview(session).section("memory")
    assert section is not None
    total = summarize(session)["saved_tensor_bytes"]
    assert section.headline.startswith(f"{total / 1024:.1f} KiB saved for the backward")
    aot = session.compiles[0].aot
    assert aot is not None
    by_name = {t.name: t for t in aot.saved_tensors}
    kib = [float(f.text.split(" ", 1)[0]) for f in section.facts if " KiB " in f.text]
    assert kib == sorted(kib, reverse=True)
    for fact in section.facts:
        tensors = [by_name[r.name] for r in fact.refs if r.kind is RefKind.SAVED_TENSOR]
        storages = {t.storage_key or t.name: math.prod(int(d) for d in t.meta.shape) * 4 for t in tensors}
        value, unit = fact.text.split(" ")[:2]
        assert float(value) * (1024 if unit == "KiB" else 1) == sum(storages.values())
        lines = {r.line for r in fact.refs if r.kind is RefKind.SOURCE_LINE}
        assert lines <= {int(m) for m in re.findall(r"\.py:(\d+)", fact.text)}
        assert all(aot.forward and aot.forward.node(t.producer).op != "placeholder" for t in tensors)  # type: ignore[union-attr]


def test_several_ranks_show_one_ranks_activations_and_the_slowest_ranks_compile_time() -> None:
    """DDP on two ranks: each rank holds its own activations (one rank's are shown, views of
    parameters and inputs counted as alive anyway) and compiles side by side (torch's frame
    compile times per rank log, plus each rank's lazily compiled backward)."""
    folder = corpus_log("dist_ddp_train")
    session = corpus_session("dist_ddp_train")
    overview = build_overview(session)
    memory = overview.section("memory")
    assert memory is not None and memory.headline.startswith("Rank 0 (each rank saves its own): ")
    for fact in memory.facts:
        for ref in fact.refs:
            assert ref.rank == 0
            if ref.kind is RefKind.SAVED_TENSOR:
                c = session.compile(ref.compile_id, 0)
                assert c is not None and c.aot is not None and c.aot.forward is not None
                t = next(t for t in c.aot.saved_tensors if t.name == ref.name)
                base = c.aot.forward.node(t.storage_key)
                assert base is None or base.op != "placeholder"  # not a view of a parameter
    per_rank = []
    for rank in (0, 1):
        log = folder / f"dedicated_log_torch_trace_rank_{rank}.log.xz"
        metrics = [h["compilation_metrics"] for h, _ in raw_records(log, "compilation_metrics")]
        backward = sum(c.metrics.stage_s.get("backward", 0.0) for c in session.compiles if c.rank == rank)
        per_rank.append(sum(m["entire_frame_compile_time_s"] or 0.0 for m in metrics) + backward)
    compile_time = overview.section("compile_time")
    ranks = overview.section("ranks")
    assert compile_time is not None and ranks is not None
    assert compile_time.headline.endswith(f"over 2 ranks ({max(per_rank):.1f} s on the slowest).")
    for rank, fact in enumerate(ranks.facts):
        assert f", {per_rank[rank]:.1f} s compiling" in fact.text


def test_a_compile_that_failed_in_the_backend_is_named_with_the_error_torch_recorded() -> None:
    """A failure other than a graph break (those are break rows) costs the frame its whole
    speedup: the Overview names it with the error the log's compilation metrics record."""
    log = SHARED_TRACES / "inputs" / "comp_failure.log"
    metrics = [header["compilation_metrics"] for header, _ in raw_records(log, "compilation_metrics")]
    failed = [m for m in metrics if m.get("fail_type")]
    assert failed
    overview = build_overview(import_trace(log))
    section = overview.section("failures")
    assert section is not None and len(section.facts) == len(failed)
    fact = section.facts[0]
    assert fact.level is Level.WARNING and fact.refs and fact.refs[0].kind is RefKind.COMPILE
    reason = failed[0]["fail_reason"].splitlines()
    assert failed[0]["fail_type"] in fact.text and all(part.strip() in fact.text for part in reason)
    assert overview.verdict.startswith(f"{len(failed)} compile failed and ran eagerly")
    # graph breaks Dynamo could not resume after are rows of the breaks section, not failures
    t5 = build_overview(corpus_session("hf_t5_train"))
    assert t5.section("failures") is None and t5.section("breaks") is not None


def test_the_overview_names_a_straggler_rank_and_no_other() -> None:
    """A recorded two-rank run where rank 1 sleeps 40 ms in every step (tests/data/ranks)."""
    from tests.compiler_core.ranks.rank_data import load_run

    ranks = build_overview(load_run("slow_rank")).section("ranks")
    assert ranks is not None
    named = [f for f in ranks.facts if "straggler" in f.text]
    assert len(named) == 1 and named[0].text.startswith("rank 1 is the straggler")
    assert named[0].level is Level.WARNING and named[0].refs[0].rank == 1
    agreeing = build_overview(load_run("diverge")).section("ranks")
    assert agreeing is not None and not any("straggler" in f.text for f in agreeing.facts)
