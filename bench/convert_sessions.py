"""Convert sessions saved by an older CompileScope to today's layout, so the app opens them.

    python bench/convert_sessions.py FILE [FILE ...]          # each rewritten in place
    python bench/convert_sessions.py OLD.json -o NEW.json

A file may be `.json`, `.json.xz` or `.json.gz`. The app reads one layout; this script holds the readers of
every earlier one (bench/legacy_sessions.py) and adds what an older file lacks. The result is
saved as the app saves (every value checked as a load checks it), so a converted file opens.
A file already in today's layout is left as it is.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from legacy_sessions import LegacyFormatError, legacy_session

from compiler_core.session.codec import atomic_write_bytes, reopenable_bytes
from compiler_core.session.gc_pause import gc_paused
from compiler_core.session.model import SCHEMA_VERSION


def convert(src: Path, dst: Path) -> str:
    """What happened to `src`, in a line."""
    raw = src.read_bytes()
    unpack = {".xz": lzma.decompress, ".gz": gzip.decompress}.get(src.suffix)
    data = json.loads(unpack(raw) if unpack else raw)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version == SCHEMA_VERSION and src == dst:
        return f"{src}: already schema {SCHEMA_VERSION}"
    with gc_paused():
        session = legacy_session(data) if version != SCHEMA_VERSION else None
    if session is None:
        dst.write_bytes(raw)
        return f"{src}: copied (already schema {SCHEMA_VERSION})"
    out = reopenable_bytes(session)
    if dst.suffix == ".xz":
        out = lzma.compress(out, preset=9 | lzma.PRESET_EXTREME)
    elif dst.suffix == ".gz":
        out = gzip.compress(out, mtime=0)
    atomic_write_bytes(dst, out)
    return f"{src}: schema {version} -> {SCHEMA_VERSION}, {dst}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("-o", "--output", type=Path, help="where to write (one input only); default: in place")
    args = p.parse_args(argv)
    if args.output and len(args.files) != 1:
        p.error("-o takes one input file")
    failed = 0
    for src in args.files:
        try:
            print(convert(src, args.output or src))
        except (OSError, ValueError, EOFError, LegacyFormatError, lzma.LZMAError) as exc:
            failed += 1
            print(f"{src}: not converted: {exc}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
