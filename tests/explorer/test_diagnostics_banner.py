"""The banner's words on real logs: damage only for a damaged log; a failed compile is said as
such; a clean log raises none."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from explorer.diagnostics_banner import banner_text
from tests.conftest import FIXTURES


def test_a_clean_log_raises_no_banner() -> None:
    assert banner_text(import_trace(FIXTURES / "traces" / "tlparse_simple.log.gz")) == ""


def test_a_cut_record_is_damage(tmp_path: Path) -> None:
    with gzip.open(FIXTURES / "traces" / "tlparse_simple.log.gz", "rt") as f:
        lines = f.read().splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if line.startswith("V") and "{" in line)
    lines[header] = lines[header][: lines[header].index("{") + 5] + "\n"  # JSON cut mid-record
    damaged = tmp_path / "damaged.log"
    damaged.write_text("".join(lines))
    text = banner_text(import_trace(damaged))
    assert text.startswith("⚠ This session was built from damaged input: "), text


def test_a_failed_compile_is_reported_not_called_damage(shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "comp_failure.log")
    text = banner_text(session)
    assert text.startswith("⚠ The compile or run reported "), text
    assert "damaged" not in text


@pytest.mark.parametrize("name", ["comp_failure.log", "chromium_events.log"])
def test_compile_errors_in_tlparse_logs_are_not_damage(shared_traces: Path, name: str) -> None:
    assert "damaged input" not in banner_text(import_trace(shared_traces / "inputs" / name))
