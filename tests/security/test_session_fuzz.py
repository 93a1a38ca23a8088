"""Fuzzing of real session files from the codec's stored types, bounded for CI.

Type-confusing, hostile, deleted and deeply nested values at random places of a real session
file (rows, tables, links, mappings); each load must end in the codec's clear error or in a
session the real window shows without an exception. `bench/fuzz_sessions.py` runs the same
property on many more examples.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from PySide6.QtWidgets import QApplication

from explorer.main_window import MainWindow
from tests.conftest import FIXTURES
from tests.security.session_fuzz import FILE, check_one, encode, mutations, show_in, typed_paths

BASE: dict[str, Any] = json.loads((FIXTURES / "gpu_stages_h100.json").read_text())


def test_every_node_of_a_real_session_is_typed() -> None:
    paths = list(typed_paths(FILE, BASE))
    assert len(paths) > 1000 and all(tp is not None for _, tp, _ in paths)
    assert sum(keyed for _, _, keyed in paths) > 100  # mapping entries: attrs, line_nodes, metrics
    assert any(path[:3] == ("tables", "SourceLoc", 0) for path, _, _ in paths)
    linked = json.loads((FIXTURES / "mlp_graph_break.json").read_text())  # BASE has no links
    assert any(len(path) == 5 and path[:2] == ("session", 3) for path, _, _ in typed_paths(FILE, linked))


@pytest.mark.timeout(600)
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(doc=mutations(BASE))
def test_mutated_sessions_are_refused_clearly_or_shown(window: MainWindow, doc: dict[str, Any]) -> None:
    app = QApplication.instance()
    assert check_one(encode(doc), show_in(window, app)) in ("refused", "shown")
