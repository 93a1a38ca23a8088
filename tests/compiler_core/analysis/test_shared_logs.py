"""Every shared tlparse input imports, and its counts equal a plain count of its records.

The expected numbers were counted independently of our reader (regex over the raw files: lines of
`dynamo_output_graph` records, `dynamo_graph_break_reason` artifacts plus `restart_reasons`
entries, `recompile_reasons` artifacts, `name = async_compile.triton|cpp_pybinding(` lines).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize
from compiler_core.session import LinkIndex, Ref, RefKind, dumps, loads

# path: (graphs, graph_breaks, recompiles, kernels)
EXPECTED = {
    "artifacts.log": (1, 0, 0, 0),
    "autotune_with_compile_id.log": (1, 0, 0, 1),
    "cache_hit_miss.log": (6, 0, 0, 3),
    "chromium_events.log": (1, 0, 0, 0),
    "comp_failure.log": (1, 0, 0, 0),
    "comp_metrics.log": (3, 2, 0, 0),
    "export.log": (0, 0, 0, 0),
    "export_guard_added.log": (0, 0, 0, 0),
    "inductor_provenance_aot_cuda_log.txt": (0, 0, 0, 0),
    "inductor_provenance_aot_debug_handle_log.txt": (0, 0, 0, 0),
    "inductor_provenance_aot_log.txt": (0, 0, 0, 0),
    "inductor_provenance_aot_log_old.txt": (0, 0, 0, 0),
    "inductor_provenance_extended_log.txt": (0, 0, 0, 0),
    "inductor_provenance_jit_cuda_log.txt": (1, 0, 0, 3),
    "inductor_provenance_jit_debug_handle_log.txt": (1, 0, 0, 3),
    "inductor_provenance_jit_log.txt": (1, 0, 0, 2),
    "links.log": (1, 0, 0, 1),
    "simple.log": (1, 0, 0, 2),
    "simple_corrupted_json.log": (1, 0, 0, 2),
    "collectives_parity": (4, 0, 3, 11),
    "multi_rank_logs": (24, 0, 20, 22),
    "multi_rank_messy_input": (2, 0, 0, 4),
    "multi_rank_runtime": (24, 0, 17, 65),
    "multi_rank_schedule": (6, 0, 0, 12),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_match_records(shared_traces: Path, name: str) -> None:
    session = import_trace(shared_traces / "inputs" / name)
    s = summarize(session)
    assert (s["graphs"], s["graph_breaks"], s["recompiles"], s["kernels"]) == EXPECTED[name]
    assert loads(dumps(session)) == session  # whatever we build survives the JSON codec


def test_every_shared_file_opens(shared_traces: Path) -> None:
    for path in sorted(shared_traces.rglob("*")):
        if path.is_file() and path.name != "LICENSE":
            import_trace(path)


def test_corrupted_json_is_a_warning_with_line(shared_traces: Path, tmp_path: Path) -> None:
    """The damaged payload (line 19) is a `compile_file` span that no stage reads, so it is not even
    decoded; the same damage in a stage span we read is a warning with its line."""
    original = shared_traces / "inputs" / "simple_corrupted_json.log"
    session = import_trace(original)
    assert not [d for d in session.diagnostics if d.severity == "warning"]
    assert session.compiles[0].dynamo_graph is not None  # the rest still loads
    lines = original.read_text().split("\n")
    assert lines[17] == '\t"compile_id": "None"' and lines[14] == '\t"name": "compile_file",'
    lines[14] = '\t"name": "entire_frame_compile",'
    (tmp_path / "stage.log").write_text("\n".join(lines))
    warnings = [d for d in import_trace(tmp_path / "stage.log").diagnostics if d.severity == "warning"]
    assert [d.line for d in warnings] == [19]
    assert "malformed JSON" in warnings[0].message


def test_multi_rank_directory(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "multi_rank_logs")
    assert session.meta.ranks == (0, 1, 2, 3)
    assert {c.rank for c in session.compiles} <= {0, 1, 2, 3}
    assert summarize(session)["ranks_diff"]["graphs"] == {
        "0": 1,
        "1": 15,
        "2": 1,
        "3": 7,
    }
    messy = import_trace(shared_traces / "inputs" / "multi_rank_messy_input")
    assert messy.meta.ranks == (0, 1)  # some_other_file.txt and another.log are ignored


def test_compile_failure_has_reason(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "comp_failure.log")
    (c,) = session.compiles
    assert c.status == "failed"
    assert c.failure.startswith("BackendCompilerFailed")
    assert "broken backend" in c.failure


def test_cache_hit_and_miss(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "cache_hit_miss.log")
    caches = [c.metrics.cache.get("fx_graph") for c in session.compiles]
    assert caches.count("hit") == 1 and caches.count("miss") == 2
    assert [c.status for c in session.compiles].count("cache_hit") == 1
    # the same test ran three times: repeated ids are kept apart, not merged
    assert [c.compile_id for c in session.compiles][:3] == ["0/0", "1/0", "0/0#2"]


def test_provenance_links_kernel_post_grad_pre_grad(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "inductor_provenance_jit_log.txt")
    c = session.compiles[0]
    out = c.inductor[0]
    kernel = next(k for k in out.kernels if k.name == "cpp_fused_gelu_1")
    assert set(kernel.fused_nodes) == {"mul_3", "mul_1", "add", "erf", "mul_2"}
    related = LinkIndex(session.links).related(
        Ref.kernel(c.compile_id, out.graph, kernel.name)
    )
    kinds = {r.kind for r in related}
    assert {RefKind.POST_GRAD_NODE, RefKind.KERNEL_LINE, RefKind.DYNAMO_NODE, RefKind.SOURCE_LINE} <= kinds


def test_export_log_keeps_unknown_kinds_as_info(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "export.log")
    infos = [d.message for d in session.diagnostics if d.severity == "info"]
    assert any("exported_program" in m for m in infos)


def test_an_extern_key_without_a_handle_gives_each_call_its_own_node(shared_traces: Path) -> None:
    """An older log's `cppCodeToPost` has one `extern_kernels.mm` key for every mm call (and a
    `mul` of a Triton kernel besides); the debug-handle log of the same model numbers them. Both
    give each call its own node, and the unnumbered key still counts as naming it."""

    def externs(log: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        out = import_trace(shared_traces / "inputs" / log).compiles[0].inductor[0]
        return {k.name: (k.fused_nodes, k.inferred_nodes) for k in out.kernels if k.language == "extern"}

    old = externs("inductor_provenance_jit_cuda_log.txt")
    assert old == externs("inductor_provenance_jit_debug_handle_log.txt")
    assert old == {"extern_kernels.mm:1": (("mm_default_1",), ()),
                   "extern_kernels.mm:2": (("mm_default",), ())}
    cpu = externs("inductor_provenance_jit_log.txt")
    assert cpu == {"extern_kernels.addmm:1": (("addmm",), ()), "extern_kernels.addmm:2": (("addmm_1",), ())}
