"""The guard diff of a recompile shows what changed, not Dynamo's renumbered globals."""

from __future__ import annotations

from explorer.state.guard_diff import guard_diff, previous_compile
from tests.bench_logs import bench_session


def test_recompile_diff_drops_renumbered_globals_and_pairs_the_change() -> None:
    """HF Llama recompiled for a dynamic sequence length ([0/1], torch 2.11 on an H200): 47 diff
    lines, 36 of them `__builtins_dict___0` → `___2`."""
    session = bench_session("hf_llama_dynamic")
    after = next(c for c in session.compiles if c.compile_id == "0/1")
    before = previous_compile(session, after)
    assert before is not None
    diff = guard_diff(before, after)
    assert not any("__builtins_dict___" in line for line in diff), diff
    old = next(i for i, line in enumerate(diff) if line.startswith("- check_tensor(L['args'][0]"))
    assert diff[old + 1].startswith("+ check_tensor(L['args'][0]")  # its new form right after it
    assert "size=[1, 8]" in diff[old] and "size=[1, None]" in diff[old + 1]
    assert any(line.startswith("+ 2 <= L['args'][0].size()[1]") for line in diff)  # the new bound
    assert len(diff) < 20
