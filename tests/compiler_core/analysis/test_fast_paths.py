"""Fast paths of the importer agree with the plain code they replace (import speed, third pass).

Each fast path here is a rewrite of a regex or a loop for speed: the reference form is kept in the
test and both run over real inputs (the guard lines of the deep bench logs) and generated ones.
"""

from __future__ import annotations

import lzma
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from compiler_core.analysis.compile_builder import guard_location
from compiler_core.analysis.kernel_calls import split_args
from compiler_core.analysis.session_builder import _devices_in

DATA = Path(__file__).resolve().parents[3] / "bench" / "data"
# the pattern `guard_location` replaces (compile_builder.py before the third pass)
_GUARD_LOC = re.compile(r"#\s*(.*?)\s*#\s*([^\s#]+\.py):(\d+) in (\w+)\s*$")
# a device is one the code allocates on (a call, not the alias every wrapper defines) or builds
# kernels for: Triton (device not named) or C++ (the CPU)
_ALLOC_DEVICE = re.compile(r"\bempty_strided_(cuda|cpu|xpu|mps)\(")
_KERNEL_KIND = {"async_compile.triton(": "triton", "async_compile.cpp(": "cpu",
                "async_compile.cpp_pybinding(": "cpu"}


def _reference_devices(code: str) -> set[str]:
    return set(_ALLOC_DEVICE.findall(code)) | {kind for text, kind in _KERNEL_KIND.items() if text in code}


def _reference_location(code: str) -> tuple[int, str, str, str, str] | None:
    m = _GUARD_LOC.search(code)
    return None if m is None else (m.start(), m.group(1), m.group(2), m.group(3), m.group(4))


def _reference_split(text: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def test_guard_location_on_real_guard_lines() -> None:
    lines = []
    for name in ("hf_llama_train", "tv_resnet_breaks"):
        text = lzma.decompress((DATA / f"{name}.log.xz").read_bytes()).decode()
        lines += [ln for ln in text.splitlines() if "+- " in ln]
    assert len(lines) > 2000
    located = 0
    for line in lines:
        for code in (line, line[line.find("+- ") + 3 :]):
            want = _reference_location(code)
            assert guard_location(code) == want, code
            located += want is not None
    assert located > 1000  # the real lines do carry locations: the check is not vacuous


@given(st.text(alphabet="# \tab.py:19 inf\u00a0_x'", max_size=40))
def test_guard_location_on_generated_text(code: str) -> None:
    assert guard_location(code) == _reference_location(code)


@given(st.text(alphabet="ab1 ,()[]{}=.", max_size=30))
def test_split_args_matches_the_bracket_loop(text: str) -> None:
    assert split_args(text) == _reference_split(text)


@given(st.text(alphabet="empty_strided_cudaxpmsc .(\n", max_size=60))
def test_devices_found_as_the_word_regex_finds_them(code: str) -> None:
    assert _devices_in(code) == _reference_devices(code)


def test_devices_are_calls_and_kernels_not_the_aliases_every_wrapper_defines() -> None:
    assert _devices_in("empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda") == set()
    assert _devices_in("buf0 = empty_strided_cuda((4, ), (1, ), torch.float32)") == {"cuda"}
    assert _devices_in("x_empty_strided_cpu((4, ), (1, ))") == set()  # not the word
    assert _devices_in("cpp_fused_0 = async_compile.cpp_pybinding(['float*'], src)") == {"cpu"}


def test_devices_in_real_output_code() -> None:
    text = lzma.decompress((DATA / "hf_llama_train.log.xz").read_bytes()).decode()
    found = _devices_in(text)
    assert found == _reference_devices(text) and "cuda" in found


def test_fx_ascii_patterns_parse_real_graphs_as_the_unicode_ones() -> None:
    """`parse_graph` takes ASCII-only regexes for an ASCII text: a trailing non-ASCII comment
    line sends the same graph through the Unicode patterns, and the nodes must not change."""
    import tempfile

    from compiler_core.analysis.compile_records import PAYLOAD_KINDS
    from compiler_core.trace.fx_text import parse_graph
    from compiler_core.trace.records import RecordReader

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "bert.log"
        log.write_bytes(lzma.decompress((DATA / "hf_bert_train.log.xz").read_bytes()))
        records = RecordReader(str(log), PAYLOAD_KINDS)
        texts = [r.payload for r in records if "def forward(" in r.payload[:5000]]
    assert len(texts) >= 4 and all(t.isascii() for t in texts)
    for text in texts:
        fast = parse_graph(text, "dynamo")
        unicode = parse_graph(text + "\n# \u00e9", "dynamo")
        assert len(fast.nodes) > 100
        assert fast.nodes == unicode.nodes



_FX_LINES = [
    "class GraphModule(torch.nn.Module):",
    '    def forward(self, L_x_: "f32[4, 8][8, 1]cpu", L_w_: "f32[8][1]cpu"):',
    "    def forward(self, a,",
    "            b):",
    "        l_x_ = L_x_",
    '        add: "f32[4, 8][8, 1]cpu" = torch.add(l_x_, L_w_);  l_x_ = None',
    '        mul: "f32[4, 8][8, 1]cpu" = add * 2',
    "        view = add.view(-1)",
    "        cat = torch.cat([add,",
    "            mul], 1)",
    "        return (mul,)",
    "         # File: /m.py:3 in forward, code: x + w",
    "    # a comment (x):",
    "  # graph id: 123",
    "",
    "   ",
    "    class GraphModule(torch.nn.Module):",
    "# form\x0cfeed = torch.relu(add)",
]


@given(st.lists(st.sampled_from(_FX_LINES), max_size=14), st.lists(st.sampled_from(_FX_LINES), max_size=4))
def test_a_shared_parse_is_the_whole_texts_parse(body: list[str], tail: list[str]) -> None:
    """`_parsed_shared` (one parse for texts that differ in trailing comment lines) gives the
    nodes parsing the whole text gives, for any mix of headers, open statements and tails."""
    from compiler_core.analysis.compile_builder import _parsed_shared
    from compiler_core.analysis.parse_memo import ParseMemo
    from compiler_core.trace.fx_text import parse_graph

    def outcome(parse: Callable[[str], Any], text: str) -> Any:
        try:
            graph = parse(text)
        except Exception as exc:  # a malformed header raises in both, or in neither
            return type(exc)
        assert graph.text == text
        return graph.nodes

    memo = ParseMemo()
    base = "\n".join(body)
    for text in (base, base + "\n" + "\n".join(tail), base + "\n"):
        shared = outcome(lambda t: _parsed_shared(memo, t, "dynamo", ""), text)
        assert shared == outcome(lambda t: parse_graph(t, "dynamo"), text)


def test_pre_grad_graph_shares_the_dynamo_parse() -> None:
    """The real case: Inductor's pre-grad text is the Dynamo text plus `# graph id: N`."""
    import tempfile

    from compiler_core.analysis.compile_builder import _parsed_shared
    from compiler_core.analysis.compile_records import PAYLOAD_KINDS
    from compiler_core.analysis.parse_memo import ParseMemo
    from compiler_core.trace.fx_text import parse_graph
    from compiler_core.trace.records import RecordReader

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "gpt2.log"
        log.write_bytes(lzma.decompress((DATA / "hf_gpt2_train.log.xz").read_bytes()))
        records = list(RecordReader(str(log), PAYLOAD_KINDS))
    dynamo = next(r.payload for r in records if r.kind == "dynamo_output_graph")
    pre = next(r.payload for r in records if "pre_grad" in f"{r.kind} {r.value}" and r.payload)
    assert pre != dynamo and pre.startswith(dynamo)
    memo = ParseMemo()
    dyn_graph = _parsed_shared(memo, dynamo, "dynamo", "")
    pre_graph = _parsed_shared(memo, pre, "pre_grad", "forward")
    assert pre_graph.nodes is dyn_graph.nodes  # one parse
    assert pre_graph.nodes == parse_graph(pre, "pre_grad", "forward").nodes
    assert pre_graph.text == pre and pre_graph.kind == "pre_grad" and pre_graph.name == "forward"
