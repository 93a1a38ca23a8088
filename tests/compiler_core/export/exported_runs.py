"""Export sessions and run every exported file in a fresh interpreter, as a user would.

The files must need nothing of this checkout: each runs with the folder it was exported to as
its working directory and no PYTHONPATH. Two run at once (a 2-core CI host); they share one
Inductor cache, as a user's runs would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

RUN_TIMEOUT_S = 300  # per file: a cold C++ compile of one kernel takes seconds, a graph repro ~15 s


@dataclass(frozen=True)
class FileRun:
    path: Path
    returncode: int
    output: str

    def __str__(self) -> str:
        return f"{self.path.name}: exit {self.returncode}\n{self.output[-3000:]}"


def run_file(path: Path, cache: Path) -> FileRun:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TORCH_TRACE", "OMP_NUM_THREADS")}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    # Inductor's own switch to trust /proc/cpuinfo's vector flags instead of probing each ISA by
    # compiling and loading a test library in a subprocess: half of a small file's run here. The
    # files still choose and check their width the same way (valid_vec_isa_list).
    env["TORCHINDUCTOR_VEC_ISA_OK"] = "1"
    done = subprocess.run(
        [sys.executable, path.name],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    return FileRun(path, done.returncode, done.stdout + done.stderr)


def run_all(paths: list[Path], cache: Path, workers: int = 2) -> dict[Path, FileRun]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(paths, pool.map(lambda p: run_file(p, cache), paths), strict=True))
