"""Recompile reasons in words, with the fix, de-duplicated like graph breaks.

Dynamo logs, for each recompile, one line per cache entry whose guards failed, newest first:
`0/1: tensor 'x' size mismatch at index 0. expected 3, actual 4`, then `0/0: ... expected 2,
actual 4`. Only the first line is the change that triggered this compile; the others repeat older
entries. A frame that recompiles on every new sequence length is one row ("input x dim 0 changed
2 → 3, 3 → 4, …", 14 times), whose fix is to mark that dim dynamic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compiler_core.session.model import Compile, Session

_PREFIX = re.compile(r"^\s*\d+/\d+:\s*")
# newer Dynamo quotes the line that made the guard after it: `n == 4   # y = x * n  # m.py:9 in f`
_GUARD_COMMENT = re.compile(r"\s+#\s.*$")
_SIZE = re.compile(r"tensor '(.+)' (size|stride) mismatch at index (\d+)\. expected (\S+), actual (\S+)")
_DTYPE = re.compile(r"tensor '(.+)' dtype mismatch\. expected (\S+), actual (\S+)")
_GRAD = re.compile(r"tensor '(.+)' requires_grad mismatch\. expected requires_grad=(\d)")
_OBJ_ID = re.compile(r"___check_obj_id\(([^,]+),")
_TYPE_ID = re.compile(r"___check_type_id\(([^,]+),")
_EQUALS = re.compile(r"^(L\[.+?\]|G\[.+?\]|[\w.\[\]']+) == (.+)$")
_INT = re.compile(r"^-?\d+$")
_LOCAL = re.compile(r"^[LG]\['([^']+)'\]")


@dataclass
class RecompileCause:
    guard: str  # the failed guard in words, with its first change
    fix: str
    raw: str  # Dynamo's text of the first occurrence
    file: str = ""
    line: int = 0
    function: str = ""
    changes: list[str] = field(default_factory=list)  # "8 → 16", one per recompile
    compile_ids: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.compile_ids)

    def in_words(self) -> str:
        if not self.changes:
            return self.guard
        distinct = list(dict.fromkeys(self.changes))  # ranks that recompiled alike say it once
        more = f", … ({len(distinct)} changes)" if len(distinct) > 3 else ""
        shown = ", ".join(distinct[:3]) + more
        return f"{self.guard} changed {shown}"

    def as_dict(self) -> dict[str, object]:
        return {
            "guard": self.in_words(),
            "fix": self.fix,
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "count": self.count,
            "raw": self.raw,
        }


def _name(text: str) -> str:
    """`L['x']` → `x`; `args[0]` stays as Dynamo wrote it."""
    text = text.strip()
    m = _LOCAL.match(text)
    return m.group(1) + text[m.end() :] if m else text


def explain(reason: str) -> tuple[str, str, str]:
    """(guard in words without values, the change as "a → b" or "", the fix) of one reason."""
    lines = _PREFIX.sub("", reason).strip().splitlines()
    text = _GUARD_COMMENT.sub("", lines[0]) if lines else ""
    if m := _SIZE.search(text):
        name, what, idx, old, new = _name(m.group(1)), m.group(2), m.group(3), m.group(4), m.group(5)
        if what == "size":
            fix = (f"mark it dynamic: torch._dynamo.mark_dynamic({name}, {idx}) before the call, "
                   "or torch.compile(..., dynamic=True)")  # fmt: skip
            return f"input {name} dim {idx}", f"{old} → {new}", fix
        return f"input {name} stride {idx}", f"{old} → {new}", "pass contiguous inputs (x.contiguous())"
    if m := _DTYPE.search(text):
        change = f"{m.group(2)} → {m.group(3)}"
        return f"input {_name(m.group(1))} dtype", change, "keep the input dtype fixed between calls"
    if m := _GRAD.search(text):
        was = m.group(2) == "1"
        return (f"input {_name(m.group(1))} requires_grad", f"{was} → {not was}",
                "keep requires_grad the same between calls")  # fmt: skip
    if m := _OBJ_ID.search(text):
        return (f"identity of {_name(m.group(1))} (a different object than at compile time)", "",
                "pass the same object each call, or compile the function once outside the loop")  # fmt: skip
    if m := _TYPE_ID.search(text):
        return f"type of {_name(m.group(1))}", "", "pass the same type each call"
    if m := _EQUALS.match(text):
        return f"value of {_name(m.group(1))}", f"from {m.group(2)}", value_fix(m.group(1), m.group(2))
    return text, "", ""


def value_fix(source: str, value: str) -> str:
    """The fix for a guard on a Python value, by what the value is: Dynamo makes only plain ints
    symbolic, so `dynamic=True` is no fix for a bool, a float or an int attribute of a module."""
    value = value.strip()
    if value in ("True", "False"):
        return ("a Python bool chooses the graph (one compile per value): keep it fixed for each "
                "compiled call, or pass it as a tensor and branch with torch.where / torch.cond")
    if _INT.match(value) and ("_modules[" in source or source.startswith(("L['self']", "self."))):
        return ("an int attribute of an nn.Module is specialised: "
                "torch._dynamo.config.allow_unspec_int_on_nn_module = True makes it symbolic, "
                "or pass the value as an argument")
    if _INT.match(value):
        return "pass it as a tensor, or torch.compile(..., dynamic=True) so ints become symbolic"
    return "pass it as a tensor, or keep it the same between calls"


_LIMIT = re.compile(r"recompile limit exceeded|cache_size_limit reached|recompile_limit reached|"
                    r"CacheLimitExceeded|RecompileLimitExceeded", re.I)  # fmt: skip


def hit_limit(c: Compile) -> bool:
    """Dynamo refused to compile the frame again (past `recompile_limit`, `cache_size_limit`
    before torch 2.6) and runs it eagerly from then on: the attempt carries the recompile reason
    but no recompile happened."""
    said = f"{c.failure}\n{c.metrics.fail_reason}"
    return c.status == "failed" and _LIMIT.search(said) is not None


def recompiled(c: Compile) -> bool:
    """The compile is a recompile that happened: it has a recompile reason and Dynamo did not
    refuse it at the limit."""
    return bool(c.recompile_reasons) and not hit_limit(c)


def distinct_recompiles(
    session: Session, rank: int | None = None, all_ranks: bool = False, run: int | None = None
) -> list[RecompileCause]:
    """One row per (frame, failed guard), most frequent first; `run` as in `distinct_breaks`."""
    rows: dict[tuple[str, int, str], RecompileCause] = {}
    for c in session.compiles:  # a million of them in some logs: those with no reason skipped first
        if not c.recompile_reasons:
            continue
        if (not all_ranks and c.rank != rank) or (run is not None and c.run != run):
            continue
        if not recompiled(c):
            continue
        first = c.recompile_reasons[0]
        guard, change, fix = explain(first)
        code = c.code
        key = (code.file if code else "", code.line if code else 0, guard)
        row = rows.get(key)
        if row is None:
            fn = code.function if code else ""
            row = rows[key] = RecompileCause(guard, fix, first.strip(), key[0], key[1], fn)
        row.compile_ids.append(c.compile_id)
        if change:
            row.changes.append(change)
    return sorted(rows.values(), key=lambda r: (-r.count, r.file, r.line, r.guard))
