"""Graph breaks and recompiles explained, de-duplicated and ranked, on real logs.

The bench logs were made on an H200 (torch 2.11, transformers 5.17) from bench/models: a
torchvision ResNet-50 with an `.item()` branch and a `print`, an HF GPT-2 whose loss path calls
transformers' `logger.warning_once`, and an HF Llama fed a growing sequence length. tlparse's own
logs add old-style restart reasons and a 14-times recompiling frame.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.queries.recompile_explain import distinct_recompiles, explain
from compiler_core.queries.summary import summarize
from compiler_core.session import Session, SourceOrigin
from tests.conftest import ROOT

DATA = ROOT / "bench" / "data"
HEADER = "Encountered graph break"


def _bench(tmp_path_factory: pytest.TempPathFactory, name: str) -> Session:
    path = tmp_path_factory.mktemp(name) / f"{name}.log"
    path.write_bytes(lzma.decompress((DATA / f"{name}.log.xz").read_bytes()))
    return import_trace(path)


@pytest.fixture(scope="module")
def resnet(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return _bench(tmp_path_factory, "tv_resnet_breaks")


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return _bench(tmp_path_factory, "hf_gpt2_train")


@pytest.fixture(scope="module")
def llama_dynamic(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return _bench(tmp_path_factory, "hf_llama_dynamic")


def test_resnet_breaks_by_specific_reason_code_and_user_line(resnet: Session) -> None:
    s = summarize(resnet)
    assert s["break_reasons"] == [
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        "Failed to trace builtin operator",
    ]
    assert not any(HEADER in r for r in s["break_reasons"])
    rows = s["distinct_breaks"]
    # ranked: the .item() under the whole ResNet body first, the print (no graph before it) last
    assert [(r["gb_code"], Path(r["file"]).name, r["line"]) for r in rows] == [
        ("GB0124", "tv_resnet_breaks.py", 18),
        ("GB0124", "tv_resnet_breaks.py", 20),
        ("GB0059", "tv_resnet_breaks.py", 20),
    ]
    assert rows[0]["ops_cut"] > 200 > rows[1]["ops_cut"] >= rows[2]["ops_cut"] == 0
    assert "capture_scalar_outputs = True" in rows[0]["hints"][0]
    assert any("reorderable_logging_functions" in h for h in rows[2]["hints"])
    brk = resnet.compiles[0].graph_breaks[0]
    assert brk.header.startswith(HEADER) and brk.explanation.startswith("Dynamo does not support tracing")
    assert brk.doc_url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"
    assert brk.location is not None and brk.location.code.startswith("if logits.abs().max().item()")
    # the traceback keeps torch's frames; the location skips them
    assert any("torch/nn/modules/module.py" in f.file for f in brk.user_stack)


def test_gpt2_logging_break_is_one_row_in_transformers(gpt2: Session) -> None:
    rows = distinct_breaks(gpt2, all_ranks=True)
    assert len(rows) == 1 and rows[0].count == 3 and rows[0].graphs_split == 3
    row = rows[0]
    assert row.gb_code == "GB0291"
    assert row.reason == "logging.Logger method not supported for non-export cases"
    assert row.location is not None and row.location.line == 4635
    assert row.location.file.endswith("site-packages/transformers/modeling_utils.py")
    assert row.location.code == "logger.warning_once("
    assert "ignore_logging_functions" in row.first.hints[0]
    # the second frame's header differs (Dynamo could not resume) yet it is the same cause
    assert [b.resumable for c in gpt2.compiles for b in c.graph_breaks] == [True, False, True]


def test_gpt2_library_sources_are_the_quoted_lines_at_their_numbers(gpt2: Session) -> None:
    """A log from another machine reads no local file (lookup is off by default): each library
    file is the lines the log quotes, at their numbers, and nothing else."""
    utils = "/opt/torch/.venv/lib/python3.12/site-packages/transformers/modeling_utils.py"
    lines = gpt2.sources[utils].splitlines()
    assert lines[4635 - 1].strip() == "logger.warning_once("
    gpt2_model = next(p for p in gpt2.sources if p.endswith("models/gpt2/modeling_gpt2.py"))
    assert set(gpt2.source_origins.values()) == {SourceOrigin.QUOTE}
    assert "lookup on this machine is off" in gpt2.source_notes[gpt2_model]
    quoted: dict[int, str] = {}
    for c in gpt2.compiles:
        for n in c.dynamo_graph.nodes if c.dynamo_graph else ():
            if n.source and n.source.code and n.source.file == gpt2_model:
                quoted[n.source.line] = n.source.code
    text = gpt2.sources[gpt2_model].splitlines()
    for line, code in quoted.items():  # every line a graph comment quotes sits at its number
        assert text[line - 1].strip() == code
    shown = {i: t for i, t in enumerate(text, 1) if t}
    assert len(shown) >= len(quoted) > 10 and len(shown) < len(text) / 3  # gaps stay gaps


def test_llama_recompile_in_words_with_fix(llama_dynamic: Session) -> None:
    rows = summarize(llama_dynamic)["distinct_recompiles"]
    assert len(rows) == 1 and rows[0]["count"] == 1
    assert rows[0]["guard"] == "input args[0] dim 1 changed 8 → 16"
    assert "mark_dynamic(args[0], 1)" in rows[0]["fix"] and "dynamic=True" in rows[0]["fix"]


def test_tlparse_recompiles_collapse_to_one_cause(shared_traces: Path) -> None:
    log = shared_traces / "inputs" / "multi_rank_logs" / "dedicated_log_torch_trace_rank_1.log"
    session = import_trace(log)
    rows = distinct_recompiles(session, all_ranks=True)
    assert len(rows) == 1 and rows[0].count == 14
    assert rows[0].in_words().startswith("input x dim 0 changed 2 → 3, 3 → 4, 4 → 5, … (14 changes)")
    assert rows[0].function == "kernel"


def test_tlparse_restart_reasons_deduplicated(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "comp_metrics.log")
    rows = distinct_breaks(session, all_ranks=True)
    assert len(rows) == 1 and rows[0].count == 2
    assert rows[0].reason.startswith("skip function graph_break in file")


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("0/0: ___check_obj_id(fn, 139870659812992)", "identity of fn"),
        ("tensor 'L['x']' dtype mismatch. expected Float, actual Half", "input x dtype"),
        ("0/3: L['n'] == 4", "value of n"),
    ],
)
def test_other_guards_in_words(reason: str, words: str) -> None:
    assert explain(reason)[0].startswith(words)


@pytest.mark.parametrize(
    ("reason", "fix"),
    [  # guards as the FSDP corpus log and the crash log record them
        ("0/1: L['self']._modules['layers']._modules['1'].is_initialized == False", "a Python bool"),
        ("10/3: L['self'].self_attn.layer_idx == 2", "allow_unspec_int_on_nn_module"),
        ("0/3: L['n'] == 4", "dynamic=True"),
        ("0/2: L['scale'] == 0.5", "pass it as a tensor, or keep it the same"),
    ],
)
def test_a_value_guards_fix_fits_what_the_value_is(reason: str, fix: str) -> None:
    assert fix in explain(reason)[2]


def test_source_cap_keeps_quoted_lines_and_says_so(gpt2: Session, tmp_path: Path) -> None:
    """Local files that would pass the cap are left out (the log's quotes kept). The test copies
    the log's quoted lines into files under a lookup root, so the lookup accepts them."""
    from compiler_core.analysis.source_lookup import SourceLookup
    from compiler_core.analysis.user_sources import collect_sources
    from compiler_core.session.source_quotes import quoted_lines

    quotes = quoted_lines(gpt2.compiles)
    big = max((p for p in gpt2.sources if len(quotes.get(p, {})) >= 3), key=lambda p: len(quotes[p]))
    # the same file as a "local install": the quoted lines at their numbers, padded to 6 kB
    root = tmp_path / "site-packages"
    local = root / big.split("site-packages/", 1)[1]
    local.parent.mkdir(parents=True)
    local.write_text(gpt2.sources[big] + "# pad\n" * 1000)
    found = collect_sources(list(gpt2.compiles), lookup=SourceLookup(roots=(str(root),)), total_cap=4000)
    assert found.notes[big].startswith("left out: over the 3 kB cap"), found.notes[big]
    assert found.origins[big] == SourceOrigin.QUOTE and found.sources[big] == gpt2.sources[big]
