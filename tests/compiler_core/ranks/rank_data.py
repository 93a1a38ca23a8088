"""Recorded two-rank runs (gloo, CPU) that the rank tests and the Ranks pane tests read.

Each was recorded by `python -m compiler_core run --nproc 2` of a script in `scripts/`:
`diverge` (rank 1 takes another branch, breaks, recompiles and runs its all_reduce outside the
graph) and `slow_rank` (the same graphs on both ranks, rank 1 40 ms slower every step). Each
folder holds the session and the two rank logs, xz-compressed. Refresh them with
`.venv/bin/python -m tests.compiler_core.ranks.rank_data` (needs torch; about 30 s).
"""

from __future__ import annotations

import dataclasses
import lzma
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from compiler_core.session.codec import loads
from compiler_core.session.model import Session

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "ranks"
SCRIPTS = Path(__file__).resolve().parent / "scripts"
RUNS = {"diverge": ("diverge.py", ()), "slow_rank": ("slow_rank.py", ())}


def load_run(name: str) -> Session:
    return loads(lzma.decompress((DATA / name / "session.json.xz").read_bytes()))


def logs_of(name: str) -> Path:
    return DATA / name / "trace"


def fan_out(session: Session, ranks: int, odd: dict[int, int]) -> Session:
    """`session`'s two recorded ranks copied to `ranks` ranks: rank r gets the compiles and
    step times of recorded rank `odd.get(r, 0)`, so a 16-rank job with one odd rank is made
    from a real two-rank run."""
    compiles = tuple(dataclasses.replace(c, rank=r) for r in range(ranks) for c in session.compiles
                     if c.rank == odd.get(r, 0))  # fmt: skip
    timeline = tuple(dataclasses.replace(s, mode=f"r{r}:{s.mode.split(':', 1)[1]}") for r in range(ranks)
                     for s in session.timeline if s.mode.startswith(f"r{odd.get(r, 0)}:"))  # fmt: skip
    meta = dataclasses.replace(session.meta, ranks=tuple(range(ranks)))
    return dataclasses.replace(session, meta=meta, compiles=compiles, timeline=timeline, timeline_events=())


def record(name: str, script: str, args: tuple[str, ...], out: Path) -> None:
    """Run `script` under `run --nproc 2` and keep its session and rank logs under `out`."""
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "session.json"
        argv = ["run", "-q", "--nproc", "2", "-o", str(session), str(SCRIPTS / script), "--", *args]
        subprocess.run([sys.executable, "-m", "compiler_core", *argv], cwd=tmp, check=True)
        if out.exists():
            shutil.rmtree(out)
        (out / "trace").mkdir(parents=True)
        (out / "session.json.xz").write_bytes(lzma.compress(session.read_bytes()))
        for log in sorted(session.with_suffix(".trace").iterdir()):
            (out / "trace" / (log.name + ".xz")).write_bytes(lzma.compress(log.read_bytes()))


if __name__ == "__main__":
    for run_name, (script_name, script_args) in RUNS.items():
        record(run_name, script_name, script_args, DATA / run_name)
        print(f"recorded {run_name}")
