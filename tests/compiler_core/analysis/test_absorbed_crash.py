"""The user's exception is one crash, blamed on the compile it escaped from.

`trouble_crash_attr` (bench/corpus, H100, torch 2.11): block 2's forward reads an attribute
its `__init__` never set. Dynamo first traces the model's forward (0/0), inlines the block, meets
the AttributeError as an "Observed exception" with no handler and runs the model's forward
eagerly; the block's forward is then compiled as a frame of its own (1/0, and 1/1 for block 2),
and there the exception leaves the compiled region and ends the run. Both failed compiles'
`compilation_metrics` name the same `fail_user_frame` line; only 1/1's frame encloses it.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.overview.overview_facts import build_overview
from compiler_core.queries.summary import summarize
from compiler_core.session.model import CRASH_STAGE

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs"
LOG = CORPUS / "trouble_crash_attr.log.xz"


def _failed_metrics() -> dict[str, dict]:
    out: dict[str, dict] = {}
    with lzma.open(LOG, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            at = line.find('{"compilation_metrics"')
            if at >= 0 and not line.startswith("\t"):
                m = json.loads(line[at:])["compilation_metrics"]
                if m.get("fail_type"):
                    out[m["compile_id"]] = m
    return out


def test_the_crash_is_counted_once_where_it_escaped() -> None:
    failed = _failed_metrics()
    assert sorted(failed) == ["0/0", "1/1"]  # both logged the exception
    lines = {(m["fail_user_frame_filename"], m["fail_user_frame_lineno"]) for m in failed.values()}
    assert len(lines) == 1  # at one line, which only 1/1's frame encloses
    ((raise_file, raise_line),) = lines
    assert failed["0/0"]["co_firstlineno"] > raise_line >= failed["1/1"]["co_firstlineno"]

    session = import_trace(LOG)
    crashes = [d for d in session.diagnostics if d.stage == CRASH_STAGE]
    assert len(crashes) == 1 and "[1/1]" in crashes[0].message and "AttributeError" in crashes[0].message
    assert (crashes[0].path, crashes[0].line) == (raise_file, raise_line)
    summary = summarize(session)
    assert [f.split(":")[0] for f in summary["failures"]] == ["1/1"]
    assert summary["diagnostics"] == 1 and summary["graph_breaks"] == 0

    outer = next(c for c in session.compiles if c.compile_id == "0/0")
    assert outer.status == "skipped" and "[1/1]" in outer.failure and "fell back to eager" in outer.failure

    overview = build_overview(session)
    text = json.dumps(overview, default=lambda o: getattr(o, "__dict__", str(o)))
    assert "1 compile failed" in text and "2 compiles failed" not in text


def test_the_crash_says_the_users_message_as_python_would() -> None:
    """torch 2.11 logs the exception's argument as Dynamo's variable (`[ConstantVariable(str:
    "...")]`); the crash quotes the message itself."""
    with lzma.open(LOG, "rt", encoding="utf-8", errors="replace") as f:
        assert "[ConstantVariable(str:" in f.read()  # the wrapping this test is about
    (crash,) = [d for d in import_trace(LOG).diagnostics if d.stage == CRASH_STAGE]
    assert "AttributeError: 'Block' object has no attribute 'layer_scale'" in crash.message
    assert "ConstantVariable" not in crash.message
