"""Write docs/benchmarks.md from the stored bench results, so the page cannot drift from them.

    python bench/benchmarks_page.py              # rewrite docs/benchmarks.md
    python bench/benchmarks_page.py -o PATH      # write the page elsewhere (the test compares)

Inputs:

- `bench/results/NAME.json`, one per bench: its `--json` line (`{"figures": [{"name", "value",
  "unit", "target", "ok"}]}`) with the `machine`, `date` and `command` it ran with, as
  `bench/record.py` stores it. Optional keys: `recorded` (how figures were kept when they were
  typed in from an earlier page rather than stored from the bench's output), a figure's own
  `machine` or `date` (where one file holds figures of two runs), and `table` (`{"columns",
  "rows"}`, e.g. the oracle's entries x checks), shown in full below the findings.
- `bench/results/notes/NAME.md`: the bench's "How checked" note; its first line is the section title.
- `bench/results/notes/findings.md`: the experiments whose conclusions the product relies on.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
NOTES = RESULTS / "notes"
PAGE = ROOT / "docs" / "benchmarks.md"

HEADER = """\
# Benchmarks

Current results only; history lives in git. This page is generated: `python
bench/benchmarks_page.py` writes it from `bench/results/*.json` (each a bench's `--json` line with
the machine, date and command it ran with; `python bench/record.py` runs a bench and stores it)
and the notes in `bench/results/notes/`. Edit those, not this page: `tests/test_benchmarks_page.py`
fails when the two differ. GPU results come from lent machines; their stored files are the record.

**ok**: yes; **no** (target missed); not judged (the bench could not judge it, e.g. its reference
loops disagreed by more than the target); — (no target). † after a date: recorded by hand from
that run's earlier page, not stored from the bench's output."""


def stored(results: Path = RESULTS) -> list[dict[str, Any]]:
    """Every stored result, by name."""
    found = [json.loads(p.read_text(encoding="utf-8")) for p in results.glob("*.json")]
    return sorted(found, key=lambda r: str(r["name"]))


def cell(value: Any) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def verdict(ok: Any, target: Any) -> str:
    if ok is None:
        return "not judged" if target not in (None, "") else "—"
    return "yes" if ok else "**no**"


def results_table(results: list[dict[str, Any]]) -> str:
    rows = ["| bench | figure | value | unit | target | ok | machine | date |",
            "|---|---|---|---|---|---|---|---|"]
    for r in results:
        by_hand = " †" if r.get("recorded") else ""
        for f in r["figures"]:
            rows.append("| " + " | ".join([
                r["name"], cell(f.get("name")), cell(f.get("value")), cell(f.get("unit")),
                cell(f.get("target")), verdict(f.get("ok"), f.get("target")),
                cell(f.get("machine") or r["machine"]), cell(f.get("date") or r["date"]) + by_hand,
            ]) + " |")
    return "\n".join(rows)


def how_checked(results: list[dict[str, Any]], notes: Path = NOTES) -> str:
    parts = ["## How checked"]
    for r in results:
        note = notes / f"{r['name']}.md"
        title, _, body = note.read_text(encoding="utf-8").strip().partition("\n")
        run = f"Run: `{r['command']}`."
        if r.get("recorded"):
            run += f" Recorded by hand from the {r['recorded']}."
        text = f"**{title.strip()}.** {' '.join(body.split())} {run}"
        parts.append(textwrap.fill(text, 100, break_long_words=False, break_on_hyphens=False))
    return "\n\n".join(parts)


def entry_tables(results: list[dict[str, Any]]) -> str:
    """The tables a list of figures cannot hold (the oracle's entries x checks), as stored."""
    parts = []
    for r in results:
        table = r.get("table")
        if not table:
            continue
        columns = ["entry", *table["columns"]]
        lines = [f"## Entries x checks (`{r['name']}`)", "", f"{r['machine']}, {r['date']}.", "",
                 "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in table["rows"]]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def page(results: Path = RESULTS) -> str:
    found = stored(results)
    notes = results / "notes"
    findings = (notes / "findings.md").read_text(encoding="utf-8").strip()
    parts = [HEADER, "## Results\n\n" + results_table(found), how_checked(found, notes), findings,
             entry_tables(found)]
    return "\n\n".join(p for p in parts if p) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output", type=Path, default=PAGE)
    args = p.parse_args(argv)
    args.output.write_text(page(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
