"""Run a bench, keep its figures, and regenerate the table at the top of docs/benchmarks.md.

    python bench/record.py --machine "2-core dev box, no GPU" -- python bench/diff_speed.py --json
    python bench/record.py --from-file OUT.txt --name timeline_truth --machine "1x H100" --command "..."
    python bench/record.py --render            # only rewrite the table from bench/results/

Every bench prints, with `--json`, one JSON object as its last line:
`{"figures": [{"name", "value", "unit", "target", "ok"}]}`. This script stores that line with the
machine, date and command in `bench/results/NAME.json` (NAME: the bench script's stem) and renders
every stored result as one table between the markers of docs/benchmarks.md, so the page's figures
are the benches' own output, never retyped. The sections below the table say how each was checked.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- figures:begin (bench/record.py) -->", "<!-- figures:end -->"


def last_json(output: str) -> dict[str, Any]:
    """The bench's figures: the last line of its output that parses as `{"figures": [...]}`."""
    for line in reversed(output.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and isinstance(data.get("figures"), list):
                return data
    raise ValueError("no {\"figures\": [...]} line in the output")


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|")


def verdict(ok: Any, target: Any) -> str:
    if ok is None:
        return "not judged (see its section)" if target is not None else "—"
    return "ok" if ok else "**missed**"


def render(results: list[dict[str, Any]]) -> str:
    """Per bench: its machine, date and command, then one row per figure."""
    parts = []
    for r in sorted(results, key=lambda r: r["name"]):
        rows = ["| figure | value | target | verdict |", "|---|---|---|---|"]
        for f in r["figures"]:
            value = f"{_cell(f.get('value'))} {f.get('unit') or ''}".strip()
            rows.append(f"| {_cell(f.get('name'))} | {value} | {_cell(f.get('target'))} | "
                        f"{verdict(f.get('ok'), f.get('target'))} |")
        head = f"**`{r['name']}`**: {r['machine']}, {r['date']}; `{r['command']}`"
        parts.append(head + "\n\n" + "\n".join(rows))
    return "\n\n".join(parts)


def stored() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))]


def rewrite_page(table: str, page: Path = PAGE) -> None:
    text = page.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{page} has no {BEGIN} … {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    page.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="")
    p.add_argument("--name", default="", help="result name (default: the bench script's stem)")
    p.add_argument("--from-file", type=Path, help="a bench's saved output instead of running one")
    p.add_argument("--command", default="", help="with --from-file: the command that made it")
    p.add_argument("--date", default=datetime.date.today().isoformat())
    p.add_argument("--render", action="store_true", help="only rewrite the page's table")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the bench command")
    args = p.parse_args()
    if not args.render:
        cmd = [c for c in args.cmd if c != "--"]
        if args.from_file:
            output, command = args.from_file.read_text(), args.command
        elif cmd:
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            sys.stderr.write(done.stderr[-2000:])
            output, command = done.stdout, " ".join(cmd)
        else:
            p.error("give a bench command after --, or --from-file, or --render")
        name = args.name or next((Path(c).stem for c in cmd if c.endswith(".py")), "")
        if not name or not args.machine:
            p.error("--name (or a bench .py in the command) and --machine are needed to record")
        result = {"name": name, "machine": args.machine, "date": args.date, "command": command,
                  **last_json(output)}
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    rewrite_page(render(stored()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
