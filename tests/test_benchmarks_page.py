"""docs/benchmarks.md's table is the benches' stored output, never retyped: the page between its
markers equals what bench/record.py renders from bench/results/, and each stored result is a
bench's `--json` line with the machine, date and command it came from."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.bench_scripts import bench_module

ROOT = Path(__file__).resolve().parent.parent


def _record() -> ModuleType:
    return bench_module("record")


def test_page_table_is_the_stored_results() -> None:
    record = _record()
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    shown = text.split(record.BEGIN, 1)[1].split(record.END, 1)[0].strip()
    assert shown == record.render(record.stored()).strip(), "run: python bench/record.py --render"


def test_stored_results_are_complete_bench_lines() -> None:
    results = _record().stored()
    assert results
    for r in results:
        assert r["machine"] and r["date"] and r["command"], r["name"]
        for f in r["figures"]:
            assert {"name", "value", "unit", "target", "ok"} <= f.keys(), (r["name"], f)


def test_last_json_takes_the_bench_line_after_other_output() -> None:
    out = 'progress\n{"not": "figures"}\n{"figures": [{"name": "a", "value": 1}]}\n'
    assert _record().last_json(out)["figures"][0]["name"] == "a"
