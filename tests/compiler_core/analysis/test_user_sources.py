"""Source texts of a log: read from disk only when asked and only when they hold the quoted lines;
otherwise the log's own quoted lines at their numbers, never another version's code around them.

Real logs: a CPU `torch.compile` of a small decoder block in a model file beside its log (made
here, in a fresh process), tlparse-style bench logs of HF GPT-2 made with transformers 5.17 (this
machine has another version installed), and a synthetic 10,000-node graph for the linear-time
check.
"""

from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.analysis.source_lookup import SourceLookup
from compiler_core.analysis.user_sources import MIN_MATCHES, agreement, with_local_sources
from compiler_core.session import Session, SourceOrigin, dumps, load, save
from compiler_core.session.source_quotes import quote_text, quoted_lines, without_local_sources
from tests.bench_scripts import bench_module
from tests.conftest import ROOT
from tests.session_rows import as_packed_of

MODEL = '''import torch


class Block(torch.nn.Module):
    """A decoder block, as transformers writes one."""

    def __init__(self, is_decoder: bool) -> None:
        super().__init__()
        self.is_decoder = is_decoder
        self.q = torch.nn.Linear(8, 8)
        self.o = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.q(x)
        if self.is_decoder:
            h = h * 2
        h = torch.relu(h)
        return self.o(h) + x
'''
# the same block one release later: an import and a masking branch shift every line, and the
# branch the log's version had is there twice (the T5 case: `if self.config.is_decoder:` twice)
NEWER = MODEL.replace("import torch\n", "import torch\nfrom typing import Optional\n", 1).replace(
    "    def forward(self, x):\n",
    "    def forward(self, x, mask: Optional[torch.Tensor] = None):\n"
    "        if self.is_decoder:\n            x = x if mask is None else x * mask\n",
)
QUOTED = {14: "h = self.q(x)", 16: "h = h * 2", 17: "h = torch.relu(h)", 18: "return self.o(h) + x"}
DRIVER = """
import runpy, sys, torch
ns = runpy.run_path(sys.argv[1])
torch.compile(ns["Block"](True), backend="eager")(torch.randn(2, 8))
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real TORCH_TRACE log of the block, moved beside its model file; returns the log."""
    folder = tmp_path_factory.mktemp("block")
    (folder / "model.py").write_text(MODEL)
    env = dict(os.environ, TORCH_TRACE=str(folder / "trace"), TORCHINDUCTOR_FX_GRAPH_CACHE="0")
    subprocess.run([sys.executable, "-c", DRIVER, str(folder / "model.py")], env=env, check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    (log,) = (folder / "trace").iterdir()
    return log.rename(folder / "trace.log")


def _copy(compiled: Path, tmp_path: Path, text: str) -> Path:
    """The log in a folder of its own, beside a model file holding `text` at the logged path."""
    log = tmp_path / "trace.log"
    model = tmp_path / "model.py"
    model.write_text(text)
    log.write_text(compiled.read_text().replace(str(compiled.parent / "model.py"), str(model)))
    return log


@pytest.mark.slow
def test_the_log_quotes_the_lines_it_compiled(compiled: Path) -> None:
    session = import_trace(compiled)
    path = str(compiled.parent / "model.py")
    quoted = {n: q for n, q in quoted_lines(session.compiles)[path].items() if not q.startswith("\0")}
    # the lines the compiled code ran are quoted (torch 2.14 quotes one more: a guard's branch),
    # each exactly as the file has it
    assert QUOTED.items() <= quoted.items()
    lines = MODEL.splitlines()
    assert all(lines[n - 1].strip() == q for n, q in quoted.items())


@pytest.mark.slow
def test_a_log_reads_its_model_file_only_with_the_lookup_on(compiled: Path, tmp_path: Path) -> None:
    log = _copy(compiled, tmp_path, MODEL)
    model = str(tmp_path / "model.py")
    off = import_trace(log)
    assert off.source_origins == {model: SourceOrigin.QUOTE}
    assert off.sources[model] == quote_text(QUOTED)  # the four quoted lines at 14-18, gaps before
    assert "lookup on this machine is off" in off.source_notes[model]
    on = import_trace(log, lookup=SourceLookup.for_log(str(log)))
    assert on.source_origins == {model: SourceOrigin.LOOKUP} and on.sources[model] == MODEL
    # the same lookup applied to the shown session (the Source pane's checkbox) finds the same file
    assert with_local_sources(off, SourceLookup.for_log(str(log))).sources == on.sources
    # a lookup whose roots leave out the log's folder reads nothing there
    elsewhere = import_trace(log, lookup=SourceLookup(roots=(str(ROOT / "docs"),)))
    assert elsewhere.source_origins == {model: SourceOrigin.QUOTE}


@pytest.mark.slow
def test_another_version_of_the_file_shows_the_quoted_lines_only(compiled: Path, tmp_path: Path) -> None:
    log = _copy(compiled, tmp_path, NEWER)
    model = str(tmp_path / "model.py")
    session = import_trace(log, lookup=SourceLookup.for_log(str(log)))
    assert session.source_origins == {model: SourceOrigin.QUOTE}
    text = session.sources[model]
    shown = {n: line for n, line in enumerate(text.splitlines(), 1) if line}
    assert shown == QUOTED  # each at its own number, nothing from the local version between
    assert "Optional" not in text and "mask" not in text and "if self.is_decoder" not in text
    note = session.source_notes[model]
    assert note.startswith(f"the local {model} does not hold them") and "of 5 quoted lines match" in note


@pytest.mark.slow
def test_agreement_needs_several_exact_quoted_lines(compiled: Path) -> None:
    quotes = quoted_lines(import_trace(compiled).compiles)[str(compiled.parent / "model.py")]
    assert agreement(MODEL, quotes).accepts(MIN_MATCHES)
    assert not agreement(MODEL, {}).accepts(0) and agreement(MODEL, {}).share == 0.0  # quotes nothing
    one = {14: QUOTED[14]}
    assert agreement(MODEL, one).share == 1.0 and not agreement(MODEL, one).accepts(MIN_MATCHES)
    # byte-equal after the indentation: a quote with another inner spacing is no match
    spaced = {**quotes, 16: "h = h *  2"}
    assert agreement(MODEL, spaced).matched == agreement(MODEL, quotes).matched - 1
    assert not agreement(NEWER, quotes).accepts(MIN_MATCHES)


@pytest.fixture(scope="module")
def gpt2_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gpt2") / "hf_gpt2_train.log"
    path.write_bytes(lzma.decompress((ROOT / "bench" / "data" / "hf_gpt2_train.log.xz").read_bytes()))
    return path


def test_an_installed_library_of_another_version_is_never_mixed_in(gpt2_log: Path) -> None:
    """The log was made with transformers 5.17; this machine's transformers is another version
    whose modeling_gpt2.py holds 20 of the 50 lines the log quotes at their numbers. Aligning the
    local file around the quoted lines would mix versions; the view is the quotes alone."""
    transformers = pytest.importorskip("transformers")
    if transformers.__version__.startswith("5.17."):
        pytest.skip("the local transformers is the log's own version")
    session = import_trace(gpt2_log, lookup=SourceLookup.for_log(str(gpt2_log)))
    gpt2 = next(p for p in session.sources if p.endswith("models/gpt2/modeling_gpt2.py"))
    assert session.source_origins[gpt2] == SourceOrigin.QUOTE
    assert "does not hold them" in session.source_notes[gpt2]
    quoted = {n: q for n, q in quoted_lines(session.compiles)[gpt2].items() if not q.startswith("\0")}
    shown = {n: line for n, line in enumerate(session.sources[gpt2].splitlines(), 1) if line}
    assert shown == quoted and len(shown) >= 40
    local = Path(transformers.__file__).parent / "models" / "gpt2" / "modeling_gpt2.py"
    only_local = {ln.strip() for ln in local.read_text().splitlines()} - set(quoted.values()) - {""}
    assert not only_local & {ln.strip() for ln in shown.values()}


def test_saving_leaves_out_what_was_read_from_this_machine(compiled_or_model: Path, tmp_path: Path) -> None:
    log = compiled_or_model
    model = str(log.parent / "model.py")
    session = import_trace(log, lookup=SourceLookup.for_log(str(log)))
    assert session.source_origins[model] == SourceOrigin.LOOKUP
    save(session, tmp_path / "default.json")
    saved = load(tmp_path / "default.json")
    assert saved.source_origins == {model: SourceOrigin.QUOTE} and "forward" not in saved.sources[model]
    assert "not saved" in saved.source_notes[model]
    save(session, tmp_path / "with.json", include_sources=True)
    assert load(tmp_path / "with.json").sources[model] == session.sources[model]
    assert without_local_sources(saved) is saved  # nothing looked up: unchanged


@pytest.fixture
def compiled_or_model(tmp_path: Path) -> Path:
    """A log naming `model.py` beside it, matching it (quick: tlparse's format, four quotes)."""
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    return _synthetic_log(tmp_path, model, list(QUOTED.items()), first=13)


def _synthetic_log(folder: Path, file: Path, quotes: list[tuple[int, str]], first: int = 1) -> Path:
    """One Dynamo graph, a node per quote, in the shape torch writes (tlparse's format), of a
    frame `forward` starting at line `first`."""
    head = "V1206 15:18:20.254000 1 torch/_dynamo/output_graph.py:1336] "
    meta = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    rows = [head + json.dumps({"dynamo_start": {"stack": []}, **meta}),
            head + json.dumps({"dynamo_output_graph": {"sizes": {}}, **meta, "has_payload": "0"}),
            "\tclass GraphModule(torch.nn.Module):", '\t    def forward(self, L_x_: "f32[4][1]cpu"):',
            "\t        l_x_ = L_x_"]  # fmt: skip
    prev = "l_x_"
    for i, (line, code) in enumerate(quotes):
        rows += [f"\t         # File: {file}:{line} in forward, code: {code}",
                 f'\t        add_{i}: "f32[4][1]cpu" = {prev} + 1;  {prev} = None']  # fmt: skip
        prev = f"add_{i}"
    rows.append(f"\t        return ({prev},)")
    metrics = {"co_name": "forward", "co_filename": str(file), "co_firstlineno": first}
    rows.append(head + json.dumps({"compilation_metrics": metrics, **meta}))
    log = folder / "trace.log"
    log.write_text("\n".join(rows) + "\n")
    return log


def test_matching_quotes_is_linear_in_the_file_and_the_graph(tmp_path: Path) -> None:
    """10,000 nodes quoting `x=x+1`, a 340,000-line local file holding it on every other line
    but never at the quoted numbers. Looking every quote up among its 170,000 places would be
    10^9 steps; matching by position is linear."""
    lines = 340_000
    big = tmp_path / "big.py"
    big.write_text("".join("x=x+1\n" if i % 2 else "y=y+1\n" for i in range(lines)))  # 2 MB
    log = _synthetic_log(tmp_path, big, [(2 * i + 1, "x=x+1") for i in range(10_000)])  # all on `y`
    start = time.perf_counter()
    session = import_trace(log, lookup=SourceLookup.for_log(str(log)))
    took = time.perf_counter() - start
    assert session.source_origins == {str(big): SourceOrigin.QUOTE}
    assert "0 of 10000 quoted lines match" in session.source_notes[str(big)]
    assert took < 15.0, f"{took:.1f} s: matching is no longer linear"  # loose for a slow host; 10^9 steps
    shifted = _synthetic_log(tmp_path, big, [(2 * i + 2, "x=x+1") for i in range(10_000)])
    assert import_trace(shifted, lookup=SourceLookup.for_log(str(shifted))).source_origins == {
        str(big): SourceOrigin.LOOKUP}


def test_an_old_session_with_aligned_text_shows_the_quotes_alone(gpt2_log: Path) -> None:
    """A session saved before `source_origins` (schema 2) by the builder that aligned another
    version's lines around the quotes: converted, its text is the log's quotes alone again."""
    fresh = import_trace(gpt2_log)
    gpt2 = next(p for p in fresh.sources if p.endswith("models/gpt2/modeling_gpt2.py"))
    utils = next(p for p in fresh.sources if p.endswith("transformers/pytorch_utils.py"))
    mixed = fresh.sources[gpt2].replace("\n\n", "\n        if self.config.is_decoder:\n", 3)
    note = ("the local x is another version (40% of the lines the log quotes match); rebuilt from the "
            "50 lines the log quotes, with 600 lines of the local version aligned on them (others blank)")
    old = Session(meta=fresh.meta, compiles=fresh.compiles, links=fresh.links,
                  sources={gpt2: mixed, utils: "def f():\n    pass\n"}, source_notes={gpt2: note})
    legacy = bench_module("legacy_sessions")
    loaded = legacy.legacy_session(as_packed_of(2, json.loads(dumps(old))))
    assert loaded.source_origins == {gpt2: SourceOrigin.QUOTE, utils: SourceOrigin.LOOKUP}
    assert loaded.sources[gpt2] == fresh.sources[gpt2] and "is_decoder" not in loaded.sources[gpt2]
    assert legacy.with_source_origins(loaded) is loaded


def test_cli_reads_local_sources_only_when_asked_and_saves_them_only_when_told(
    compiled_or_model: Path, tmp_path: Path,
) -> None:
    log = compiled_or_model
    model = str(log.parent / "model.py")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "compiler_core", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=300, check=True)  # fmt: skip

    assert json.loads(cli("summary", str(log)).stdout)["sources"] == {"log quote": 1}
    assert json.loads(cli("summary", "--local-sources", str(log)).stdout)["sources"] == {"local lookup": 1}
    out = tmp_path / "out.json"
    run = cli("import", "--local-sources", str(log), "-o", str(out))
    assert "--include-sources" in run.stderr and load(out).source_origins == {model: SourceOrigin.QUOTE}
    cli("import", "--local-sources", "--include-sources", str(log), "-o", str(out))
    assert load(out).sources[model] == MODEL
    cli("import", str(log), "-o", str(out))
    assert load(out).source_origins == {model: SourceOrigin.QUOTE}
    # a folder of the user's besides the log's: read only once named with --source-root
    checkout, logs = tmp_path / "checkout", tmp_path / "logs"
    checkout.mkdir()
    logs.mkdir()
    (checkout / "model.py").write_text(MODEL)
    elsewhere = _synthetic_log(logs, checkout / "model.py", list(QUOTED.items()), first=13)
    assert json.loads(cli("summary", "--local-sources", str(elsewhere)).stdout)["sources"] == {"log quote": 1}
    rooted = cli("summary", "--local-sources", "--source-root", str(checkout), str(elsewhere))
    assert json.loads(rooted.stdout)["sources"] == {"local lookup": 1}
