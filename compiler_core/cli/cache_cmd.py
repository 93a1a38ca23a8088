"""`python -m compiler_core cache [--clear]`: where captures keep Inductor's caches, how big that
folder is against its cap, and emptying it (compiler_core/worker/cache_store.py says what it
holds and how it is bounded)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from compiler_core.worker.cache_store import clear, usage
from compiler_core.worker.protocol import default_cache_dir


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("cache", help="show or clear the capture cache", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clear", action="store_true", help="delete everything in the cache folder")
    p.add_argument("--json", action="store_true", help="print one JSON line")


def run(args: argparse.Namespace) -> int:
    root = default_cache_dir()
    freed = clear(root) if args.clear else None
    u = usage(root)
    if args.json:
        print(json.dumps({"path": str(u.path), "files": u.files, "bytes": u.bytes, "cap_bytes": u.cap_bytes,
                          **({"freed_bytes": freed} if freed is not None else {})}))
        return 0
    if freed is not None:
        print(f"cleared {root}: {freed / 2**20:.1f} MB freed")
    cap = f"{u.cap_bytes / 2**20:.0f} MB" if u.cap_bytes else "no cap"
    print(f"{u.path}: {u.files} files, {u.bytes / 2**20:.1f} MB (cap {cap}; set COMPILESCOPE_CACHE_MAX_MB, "
          "or COMPILESCOPE_CACHE_DIR for another folder)")
    return 0
