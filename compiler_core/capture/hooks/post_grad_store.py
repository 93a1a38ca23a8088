"""Our post-grad graph records, kept beside Inductor's FX graph cache so warm captures stay fast.

On an FX graph cache hit Inductor skips its post-grad passes, so the hook that sees the final
post-grad graph never fires; torch still logs the graph's text, kernels and provenance from the
cache, but not the node metadata (stack traces, module paths) we record. Turning the cache off
costs a full Inductor lowering per graph, most of a warm capture, so instead we store each
post-grad record under the FX cache key of the compile that produced it and replay it on a hit.

Staleness: the key covers the graph, config and torch version, and the recording backend's
custom pass contributes a fingerprint of the pre-Inductor graph *with* its metadata (see
`RecordingBackend`), so editing a comment that shifts user lines changes the key and recompiles.
Entries are small JSON files written atomically; a missing or unreadable one just means the
session falls back to the post-grad text that torch logged.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

RECORD_VERSION = "1"  # bump when graph_records' output changes, so old entries are not replayed
_SAFE_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,200}$")


def store_dir() -> Path:
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        root = cache_dir()
    except ImportError:  # older layout: the env var or the temp dir, as Inductor itself does
        default = os.path.join(tempfile.gettempdir(), "torchinductor")
        root = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or default
    return Path(root) / "compilescope" / f"post_grad_v{RECORD_VERSION}"


def _path(key: str) -> Path | None:
    return store_dir() / f"{key}.json" if _SAFE_KEY.match(key) else None


def put(key: str, payload: str) -> None:
    path = _path(key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs the enrichment on the next hit


def get(key: str) -> str | None:
    path = _path(key)
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
