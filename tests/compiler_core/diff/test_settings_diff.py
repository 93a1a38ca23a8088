"""A before/after says first what the two runs were told differently: the re-run with a lower
activation_memory_budget names the budget, and identical settings name nothing (real CPU
captures, from tests/explorer/compare/data)."""

from __future__ import annotations

import gzip
from pathlib import Path

from compiler_core.diff import diff_sessions
from compiler_core.diff.diff_text import session_text
from compiler_core.session import Session, loads

DATA = Path(__file__).resolve().parents[2] / "explorer" / "compare" / "data"


def _session(name: str) -> Session:
    return loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))


def test_the_budget_rerun_names_the_budget_and_nothing_else() -> None:
    diff = diff_sessions(_session("train_budget_default"), _session("train_budget_0.1"))
    assert [(c.name, c.before, c.after) for c in diff.settings] == [
        ("functorch.activation_memory_budget", "", "0.1")]
    assert "functorch.activation_memory_budget  (not set) → 0.1" in session_text(diff)


def test_a_session_against_itself_has_no_settings_line() -> None:
    session = _session("print_break")
    diff = diff_sessions(session, session)
    assert diff.settings == () and "settings:" not in session_text(diff)
