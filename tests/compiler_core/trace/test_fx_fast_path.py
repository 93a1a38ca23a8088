"""The FX text parser's one-regex fast path gives exactly the nodes of its general path.

`parse_graph` matches most statements of a deep graph with one regex (`_FAST`) and sends every
other line through the general statement parser. Both must agree: these tests parse real logged
graphs (the bundled tlparse fixtures and the real 24-layer GPT-2 bench log) and tricky lines
with the fast path on and off and compare every node field.
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.trace import fx_text

ROOT = Path(__file__).resolve().parents[3]
NEVER = re.compile(r"(?!)")


def _both(text: str, kind: str = "post_grad") -> tuple[object, object]:
    fast = fx_text.parse_graph(text, kind)
    saved = fx_text._FAST
    fx_text._FAST = NEVER
    try:
        slow = fx_text.parse_graph(text, kind)
    finally:
        fx_text._FAST = saved
    return fast, slow


TRICKY = '''class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4, 16][16, 1]cpu", primals_2: "f32[16][1]cpu"):
        # File: /m.py:3 in forward, code: y = self.fc(x)
        mm: "f32[4, 16][16, 1]cpu" = torch.ops.aten.mm.default(primals_1, primals_1);  primals_1 = None
        add: "f32[4, 16][16, 1]cpu" = torch.ops.aten.add.Tensor(mm, primals_2)
        full: "f32[][]cpu" = torch.ops.aten.full.default([], 0, device = device(type='cpu'))
        odd: "f32[4][1]cpu" = torch.ops.aten.odd.default(add, ')(')
        cmt: "f32[4][1]cpu" = torch.ops.aten.neg.default(add)  # a trailing comment
        spaced: "f32[4][1]cpu"  =  torch.ops.aten.neg.default(add)
        multi: "f32[4][1]cpu" = torch.ops.aten.cat.default([add,
            mm], 1)
        sym = add.size(0)
        meth: "f32[4][1]cpu" = add.view(4, sym);  add = None
        mod = self.fc(mm)
        item = mm[0]
        quoted: "f32[4][1]cpu" = torch.ops.aten.x.default(mm, "a;b")
        # No stacktrace found for following nodes
        tail: "f32[4][1]cpu" = torch.ops.aten.relu.default(mm);  mm = cmt = None
        return (tail, full, odd,
            meth, mod)

    class inner(torch.nn.Module):
        def forward(self, x: "f32[1][1]cpu"):
            y: "f32[1][1]cpu" = torch.ops.aten.relu.default(x)
            return (y,)
'''


def test_tricky_lines_parse_the_same_both_ways() -> None:
    fast, slow = _both(TRICKY)
    assert fast == slow
    names = [n.name for n in fast.nodes]  # type: ignore[attr-defined]
    assert names[:2] == ["primals_1", "primals_2"] and "y" not in names and names[-1] == "output"
    by = {n.name: n for n in fast.nodes}  # type: ignore[attr-defined]
    assert by["mm"].inputs == ("primals_1",) and by["mm"].source.line == 3
    assert by["meth"].op == "call_method" and by["meth"].inputs == ("add", "sym")
    assert by["mod"].op == "call_module" and by["mod"].target == "fc"
    assert by["tail"].source is None and by["multi"].inputs == ("add", "mm")


def _graph_texts(log: Path) -> list[tuple[str, str]]:
    session = import_trace(log)
    out = []
    for c in session.compiles:
        graphs = [c.dynamo_graph]
        if c.aot is not None:
            graphs += [c.aot.joint, c.aot.forward, c.aot.backward, c.aot.inference]
        graphs += [g for o in c.inductor for g in (o.post_grad, o.pre_grad)]
        out += [(g.text, g.kind) for g in graphs if g is not None and g.text]
    return out


def test_bundled_logs_parse_the_same_both_ways() -> None:
    traces = ROOT / "tests" / "fixtures" / "traces"
    logs = [*sorted(traces.glob("*.log.gz")), traces / "tp_2rank"]
    assert logs
    checked = 0
    for log in logs:
        for text, kind in _graph_texts(log):
            fast, slow = _both(text, kind)
            assert fast == slow, (log.name, kind)
            checked += 1
    assert checked


def test_real_deep_graphs_parse_the_same_both_ways(tmp_path: Path) -> None:
    data = ROOT / "bench" / "data" / "hf_gpt2_train.log.xz"
    if not data.exists():
        pytest.skip("bench data not checked out")
    log = tmp_path / "gpt2.log"
    log.write_bytes(lzma.decompress(data.read_bytes()))
    texts = _graph_texts(log)
    assert sum(len(t.splitlines()) for t, _ in texts) > 20_000
    for text, kind in texts:
        fast, slow = _both(text, kind)
        assert fast == slow, kind


def test_tlparse_public_logs_parse_the_same_both_ways(shared_traces: Path) -> None:
    logs = sorted(p for p in shared_traces.rglob("*") if p.is_file() and ".log" in p.name)
    assert logs
    checked = 0
    for log in logs:
        try:
            texts = _graph_texts(log)
        except OSError:
            continue
        for text, kind in texts:
            fast, slow = _both(text, kind)
            assert fast == slow, (log.name, kind)
            checked += 1
    assert checked > 20
