"""Do two session files hold the same content? For checking a speed change against the tree before it.

    python bench/compare_sessions.py OLD.json NEW.json

Both are decoded with the current codec and compared as `Session` objects, ignoring when and from
where they were imported (`meta.created_unix`, `meta.origin_path`): graphs, nodes, links, kernels,
kernel lines and everything else must be equal. If they are not, it reports whether the difference
is confined to the AOT forward↔backward partners and the links derived from them, and whether the
new partners and links are a subset of the old (the issue-13 change to source-line partners), and
prints the first differing paths of the raw payload otherwise. Exit status 0 when equal.
"""

from __future__ import annotations

import dataclasses as dc
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler_core.session import Session, load  # noqa: E402


def _neutral(s: Session) -> Session:
    return dc.replace(s, meta=dc.replace(s.meta, created_unix=0.0, origin_path=""))


def _without_partners(s: Session) -> Session:
    cs = tuple(dc.replace(c, aot=dc.replace(c.aot, backward_of={}) if c.aot else None) for c in s.compiles)
    return dc.replace(s, compiles=cs, links={})


def _first_diffs(a: Any, b: Any, path: str, out: list[str]) -> None:
    if len(out) >= 15:
        return
    if dc.is_dataclass(a) and dc.is_dataclass(b) and type(a) is type(b):
        for f in dc.fields(a):
            _first_diffs(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}", out)
    elif isinstance(a, tuple | list) and isinstance(b, tuple | list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _first_diffs(x, y, f"{path}[{i}]", out)
    elif isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}[{k!r}]: only in {'new' if k not in a else 'old'}")
            else:
                _first_diffs(a[k], b[k], f"{path}[{k!r}]", out)
    elif a != b:
        out.append(f"{path}: {str(a)[:80]!r} != {str(b)[:80]!r}")


def main() -> int:
    old, new = (_neutral(load(p)) for p in sys.argv[1:3])
    if old == new:
        print("equal: same graphs, nodes, links, kernels, kernel lines and the rest")
        return 0
    if _without_partners(old) == _without_partners(new):
        pairs = zip(old.compiles, new.compiles, strict=True)
        sub = all(set(v) <= set(co.aot.backward_of.get(k, ())) for co, cn in pairs
                  if cn.aot and co.aot for k, v in cn.aot.backward_of.items())  # fmt: skip
        old_links = {(a, b) for a, t in old.links.items() for b in t}
        new_links = {(a, b) for a, t in new.links.items() for b in t}
        dropped = Counter((a.split("|")[0], b.split("|")[0]) for a, b in old_links - new_links)
        print("differ only in AOT backward partners and links;",
              f"new partners a subset of the old: {sub};",
              f"link ends {len(old_links)} -> {len(new_links)},",
              f"new a subset of the old: {new_links <= old_links};",
              f"dropped by kind: {dict(dropped)}")  # fmt: skip
        return 1
    out: list[str] = []
    _first_diffs(old, new, "session", out)
    print("differ:", *out, sep="\n  ")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
