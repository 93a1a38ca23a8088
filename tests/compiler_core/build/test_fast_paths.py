"""Fast paths of the importer agree with the plain code they replace (import speed, third pass).

Each fast path here is a rewrite of a regex or a loop for speed: the reference form is kept in the
test and both run over real inputs (the guard lines of the deep bench logs) and generated ones.
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compiler_core.build.compile_builder import guard_location
from compiler_core.build.kernel_lines import _split_args
from compiler_core.build.session_builder import _devices_in

DATA = Path(__file__).resolve().parents[3] / "bench" / "data"
# the pattern `guard_location` replaces (compile_builder.py before the third pass)
_GUARD_LOC = re.compile(r"#\s*(.*?)\s*#\s*([^\s#]+\.py):(\d+) in (\w+)\s*$")
_ALLOC_DEVICE = re.compile(r"\bempty_strided_(cuda|cpu|xpu|mps)\b")


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
    assert _split_args(text) == _reference_split(text)


@given(st.text(alphabet="empty_strided_cudaxpmsc .(\n", max_size=60))
def test_devices_found_as_the_word_regex_finds_them(code: str) -> None:
    assert _devices_in(code) == set(_ALLOC_DEVICE.findall(code))


def test_devices_in_real_output_code() -> None:
    text = lzma.decompress((DATA / "hf_llama_train.log.xz").read_bytes()).decode()
    found = _devices_in(text)
    assert found == set(_ALLOC_DEVICE.findall(text)) and "cuda" in found


def test_fx_ascii_patterns_parse_real_graphs_as_the_unicode_ones() -> None:
    """`parse_graph` takes ASCII-only regexes for an ASCII text: a trailing non-ASCII comment
    line sends the same graph through the Unicode patterns, and the nodes must not change."""
    import tempfile

    from compiler_core.build.compile_records import PAYLOAD_KINDS
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

