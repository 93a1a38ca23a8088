"""Gzip-compressed per-rank logs from a real 2×H200 tensor-parallel job (resources/distributed/).

Rank 1 saw a second input shape and recompiled frame 0; rank 0 did not. The recompile reason is
logged by that torch as plain text under an `"encoding": "json"` header, and must not be dropped.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize
from compiler_core.session import LinkIndex, Ref, dumps, loads
from compiler_core.trace.compile_ids import trace_files

TP = Path(__file__).resolve().parents[2] / "fixtures" / "traces" / "tp_2rank"
REASON = "0/0: tensor 'x' size mismatch at index 1. expected 64, actual 96"


def test_two_rank_gz_directory() -> None:
    session = import_trace(TP)
    assert session.meta.ranks == (0, 1)
    assert not [d for d in session.diagnostics if d.severity != "info"]
    assert [(c.rank, c.compile_id) for c in session.compiles] == [(0, "0/0"), (1, "0/0"), (1, "0/1")]
    recompiled = session.compile("0/1", rank=1)
    assert recompiled is not None and recompiled.recompile_reasons == (REASON,)
    s = summarize(session)
    assert s["recompiles"] == 1
    assert s["ranks_diff"]["graphs"] == {"0": 1, "1": 2}
    seconds = s["ranks_diff"]["compile_s"]
    assert set(seconds) == {"0", "1"} and seconds["1"] > seconds["0"] > 0
    assert loads(dumps(session)) == session


def test_collectives_visible_in_every_graph() -> None:
    session = import_trace(TP)
    for c in session.compiles:
        assert c.dynamo_graph is not None
        assert any(n.target.endswith("_c10d_functional.all_reduce") for n in c.dynamo_graph.nodes)
        for out in c.inductor:
            assert out.post_grad is not None
            reduces = [n for n in out.post_grad.nodes if "_c10d_functional.all_reduce" in n.target]
            assert reduces, (c.rank, c.compile_id, out.graph)
    links = LinkIndex(session.links)
    node = next(n for n in session.compiles[2].dynamo_graph.nodes if "all_reduce" in n.target)  # type: ignore[union-attr]
    assert links.related(Ref.dynamo_node("0/1", node.name, 1))  # linked like any node


def test_single_gz_file_takes_rank_from_name() -> None:
    rank1 = next(p for p in TP.iterdir() if "rank_1" in p.name)
    session = import_trace(rank1)
    assert session.meta.ranks == (1,)
    assert summarize(session)["recompiles"] == 1


def test_plain_and_gz_copies_are_read_once(tmp_path: Path) -> None:
    for p in TP.iterdir():
        shutil.copy(p, tmp_path / p.name)
    rank0 = next(tmp_path.glob("*rank_0*.gz"))
    (tmp_path / rank0.name[: -len(".gz")]).write_bytes(gzip.decompress(rank0.read_bytes()))
    files = trace_files(tmp_path)
    assert [(Path(f).name.endswith(".gz"), r) for f, r in files] == [(False, 0), (True, 1)]
    assert len(import_trace(tmp_path).compiles) == 3


def test_truncated_gz_keeps_earlier_records(tmp_path: Path) -> None:
    data = next(p for p in TP.iterdir() if "rank_1" in p.name).read_bytes()
    cut = tmp_path / "dedicated_log_torch_trace_rank_1.log.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    session = import_trace(cut)
    assert any("ends early" in d.message for d in session.diagnostics)
    assert session.compiles and session.compiles[0].dynamo_graph is not None


def test_concatenated_gzip_members(tmp_path: Path) -> None:
    """`cat a.gz b.gz` (an appended log) is one valid gzip file of two members."""
    text = gzip.decompress(next(p for p in TP.iterdir() if "rank_1" in p.name).read_bytes())
    cut = text.index(b"\nV", len(text) // 2) + 1
    path = tmp_path / "dedicated_log_torch_trace_rank_1.log.gz"
    path.write_bytes(gzip.compress(text[:cut]) + gzip.compress(text[cut:]))
    session = import_trace(path)
    assert not [d for d in session.diagnostics if d.severity != "info"]
    assert summarize(session)["recompiles"] == 1


def test_stage_artifacts_fill_autotune_and_cudagraph(tmp_path: Path) -> None:
    """compilescope_autotune / compilescope_cudagraphs records (here appended to rank 0's real log
    as another gzip member) reach InductorOutput through the stage readers' parse functions."""
    import json

    rank0 = next(p for p in TP.iterdir() if "rank_0" in p.name)
    head = (
        'V1122 03:41:09.000000 1194 compiler_core/stages/x.py:1] {"artifact": {"name": "%s", '
        '"encoding": "json"}, "rank": 0%s, "has_payload": "0"}\n\t%s\n'
    )
    choices = [{"name": "triton_mm_1", "time_ms": 0.01}, {"name": "extern_mm", "time_ms": 0.02}]
    tuned = {"graph": "forward", "results": [{"op": "mm", "winner": "triton_mm_1", "choices": choices}]}
    events = {
        "events": [{"kind": "skip", "compile_id": "0/0", "graph": "backward", "message": "mutated inputs"}]
    }
    extra = head % (
        "compilescope_autotune",
        ', "frame_id": 0, "frame_compile_id": 0, "attempt": 0',
        json.dumps(tuned),
    )
    extra += head % ("compilescope_cudagraphs", "", json.dumps(events))
    path = tmp_path / rank0.name
    path.write_bytes(rank0.read_bytes() + gzip.compress(extra.encode()))
    (c,) = import_trace(path).compiles
    fw, bw = c.inductor
    assert [r.winner for r in fw.autotune] == ["triton_mm_1"] and not bw.autotune
    assert bw.cudagraph is not None and not bw.cudagraph.captured and "mutated" in bw.cudagraph.skip_reason


def test_xz_logs_read_as_their_plain_text(tmp_path: Path) -> None:
    """`.xz` (how bench/data keeps its real logs): the same session as the plain log, a
    directory of `.log.xz` per rank, and a cut file keeps what came before the cut."""
    import lzma

    from tests.bench_logs import DATA

    packed = DATA / "hf_llama_dynamic.log.xz"
    plain = tmp_path / "plain" / "hf_llama_dynamic.log"
    plain.parent.mkdir()
    plain.write_bytes(lzma.decompress(packed.read_bytes()))
    from_plain, from_xz = import_trace(plain), import_trace(packed)
    assert from_xz.compiles == from_plain.compiles and from_xz.links == from_plain.links
    assert len(from_xz.diagnostics) == len(from_plain.diagnostics)
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for rank in (0, 1):
        shutil.copy(packed, ranks / f"dedicated_log_torch_trace_rank_{rank}.log.xz")
    assert [r for _, r in trace_files(ranks)] == [0, 1]
    assert len(import_trace(ranks).compiles) == 2 * len(from_plain.compiles)
    data = packed.read_bytes()
    cut = tmp_path / "cut.log.xz"
    cut.write_bytes(data[: len(data) // 2])
    session = import_trace(cut)
    assert any("ends early" in d.message for d in session.diagnostics)
    assert session.compiles


def test_a_file_that_is_no_trace_is_named_so_and_refused_by_the_cli(tmp_path: Path) -> None:
    """A model file or any text read as a log: the session says why it is empty, and `import`
    and `summary` exit 2 instead of writing an empty session. An empty log says it is empty
    (tests/security/test_hostile_text_out.py)."""
    import subprocess
    import sys

    from compiler_core.trace.records import NOT_A_TRACE
    from tests.conftest import ROOT

    model = ROOT / "resources" / "examples" / "small_cnn.py"
    session = import_trace(model)
    assert not session.compiles and session.diagnostics[0].message == NOT_A_TRACE
    out = tmp_path / "s.json"
    for args in (["import", str(model), "-o", str(out)], ["summary", str(model)]):
        run = subprocess.run([sys.executable, "-m", "compiler_core", *args], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
        assert run.returncode == 2 and "not a TORCH_TRACE log" in run.stderr, run.stderr
    assert not out.exists()
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert [d.message for d in import_trace(empty).diagnostics] != [NOT_A_TRACE]  # empty, not of another kind
