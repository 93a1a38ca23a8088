"""docs/benchmarks.md is generated from the benches' stored output, never retyped: the page equals
what bench/benchmarks_page.py writes from bench/results/, every stored result is a bench's `--json`
line with the machine, date and command it came from, and a missed target shows as missed."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.bench_scripts import bench_module

ROOT = Path(__file__).resolve().parent.parent


def _page() -> ModuleType:
    return bench_module("benchmarks_page")


def test_page_is_the_stored_results(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    assert _page().main(["-o", str(out)]) == 0
    shown = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") == shown, "run: python bench/benchmarks_page.py"


def test_stored_results_are_complete_bench_lines() -> None:
    page = _page()
    results = page.stored()
    assert results
    for r in results:
        assert r["machine"] and r["date"] and r["command"], r["name"]
        assert (page.NOTES / f"{r['name']}.md").is_file(), f"no How-checked note for {r['name']}"
        for f in r["figures"]:
            assert {"name", "value", "unit", "target", "ok"} <= f.keys(), (r["name"], f)


def test_every_missed_target_is_shown_missed() -> None:
    page = _page()
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    rows = {line for line in text.splitlines() if line.startswith("| ")}
    missed = [(r, f) for r in page.stored() for f in r["figures"] if f["ok"] is False]
    assert missed, "the stored results hold missed targets; the check below must see some"
    for r, f in missed:
        shown = [row for row in rows if row.startswith(f"| {r['name']} | {page.cell(f['name'])} |")]
        assert len(shown) == 1 and "| **no** |" in shown[0], (r["name"], f["name"])


def test_verdicts() -> None:
    verdict = _page().verdict
    assert verdict(False, 5) == "**no**" and verdict(True, 5) == "yes"
    assert verdict(None, "within ±5 %") == "not judged" and verdict(None, None) == "—"


def test_last_json_takes_the_bench_line_after_other_output() -> None:
    out = 'progress\n{"not": "figures"}\n{"figures": [{"name": "a", "value": 1}]}\n'
    assert bench_module("record").last_json(out)["figures"][0]["name"] == "a"
