"""Shared fixtures: one Inductor cache dir per test session, so only the first compile is cold."""

from __future__ import annotations

import functools
import subprocess
import sys
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


@functools.cache
def _torch_loads_under(cap_mb: int) -> bool:
    code = (f"import resource; c = {cap_mb} << 20; resource.setrlimit(resource.RLIMIT_AS, (c, c)); "
            "import torch")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300).returncode == 0


@pytest.fixture
def torch_fits_the_cap() -> None:
    """Skips a test whose 2-3 GiB address-space cap this torch build cannot even be loaded under
    (a CUDA wheel maps several GiB of libraries): the worker then says the cap refused torch
    (test_a_cap_too_small_for_torch_says_so), which is not what such a test is about."""
    if not _torch_loads_under(2048):
        pytest.skip("this torch build cannot be loaded under a 2 GiB address-space cap")
