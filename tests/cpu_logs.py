"""Real TORCH_TRACE logs made on this machine's CPU, once per test process.

Each script in `tests/fixtures/trace_scripts/` runs in a fresh interpreter under `TORCH_TRACE`
(as a user would run theirs), with its own Inductor cache unless `cache` names a shared one: a
script run twice against one cache is how a user's second run hits the FX-graph cache.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "fixtures" / "trace_scripts"
_CACHES: dict[str, Path] = {}


@dataclass(frozen=True)
class CpuLog:
    path: Path  # the one log file the run wrote
    stdout: str
    returncode: int


@functools.cache
def cpu_log(script: str, cache: str = "", attempt: int = 0) -> CpuLog:
    """Run `trace_scripts/<script>` under TORCH_TRACE; `cache` shares an Inductor cache between
    calls that name it, `attempt` tells apart two runs of one script against it."""
    out = _temp_dir(f"cs-cpu-log-{Path(script).stem}-")
    if cache:
        inductor_cache = _CACHES.get(cache) or _CACHES.setdefault(cache, _temp_dir("cs-inductor-cache-"))
    else:
        inductor_cache = out / "inductor-cache"
    env = dict(os.environ, TORCH_TRACE=str(out / "trace"), TORCHINDUCTOR_CACHE_DIR=str(inductor_cache),
               PYTHONPATH=str(ROOT))  # fmt: skip
    done = subprocess.run([sys.executable, str(SCRIPTS / script)], env=env, capture_output=True, text=True,
                          timeout=600, cwd=out)  # fmt: skip
    logs = sorted((out / "trace").glob("dedicated_log_torch_trace*.log"))
    assert len(logs) == 1, (logs, done.stderr[-3000:])
    return CpuLog(logs[0], done.stdout, done.returncode)


def _temp_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
