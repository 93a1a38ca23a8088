"""Run a bench, keep its figures, and regenerate docs/benchmarks.md.

    python bench/record.py --machine "2-core dev box, no GPU" -- python bench/diff_speed.py --json
    python bench/record.py --from-file OUT.txt --name timeline_truth --machine "1x H100" --command "..."

Every bench prints, with `--json`, one JSON object as its last line:
`{"figures": [{"name", "value", "unit", "target", "ok"}]}`. This script stores that line with the
machine, date and command in `bench/results/NAME.json` (NAME: the bench script's stem), then
rewrites the page with bench/benchmarks_page.py, so the page's figures are the benches' own
output, never retyped. A new bench also needs its note, bench/results/notes/NAME.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import benchmarks_page
from benchmarks_page import PAGE

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", default="")
    p.add_argument("--name", default="", help="result name (default: the bench script's stem)")
    p.add_argument("--from-file", type=Path, help="a bench's saved output instead of running one")
    p.add_argument("--command", default="", help="with --from-file: the command that made it")
    p.add_argument("--date", default=datetime.date.today().isoformat())
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the bench command")
    args = p.parse_args()
    cmd = [c for c in args.cmd if c != "--"]
    if args.from_file:
        output, command = args.from_file.read_text(), args.command
    elif cmd:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        sys.stderr.write(done.stderr[-2000:])
        output, command = done.stdout, " ".join(cmd)
    else:
        p.error("give a bench command after --, or --from-file")
    name = args.name or next((Path(c).stem for c in cmd if c.endswith(".py")), "")
    if not name or not args.machine:
        p.error("--name (or a bench .py in the command) and --machine are needed to record")
    result = {"name": name, "machine": args.machine, "date": args.date, "command": command,
              **last_json(output)}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    PAGE.write_text(benchmarks_page.page(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
