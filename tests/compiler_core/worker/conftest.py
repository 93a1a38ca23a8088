"""Shared fixtures: one Inductor cache dir per test session, so only the first compile is cold."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def capture_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("capture-cache")


@pytest.fixture
def model_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a model file from dedented source; returns its path."""

    def write(name: str, source: str) -> Path:
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return path

    return write
