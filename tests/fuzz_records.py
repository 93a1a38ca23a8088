"""Type-confusing and deep-nesting mutations of REAL trace records.

A log is split into records (a glog header line with its JSON metadata, then TAB payload lines).
A mutation picks one record and replaces one value somewhere in its metadata or in its JSON
payload with a value of another type (string for int, list for dict, ...) or with a deeply
nested structure, then writes the log back. Every other line stays byte-identical, so a reader
that validates before use must keep everything else.

Shared by the CI tests (few examples) and `bench/fuzz_logs.py` (many): one definition of what
"a damaged record" means.
"""

from __future__ import annotations

import gzip
import json
import lzma
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
_HEADER = re.compile(rb"^([VIWEC]\d{4} [^\]\n]*\] ?)(\{.*)$")

# Values of every JSON type, plus the ones that hurt: huge ints, NaN-ish strings, deep nesting.
CONFUSERS: tuple[Any, ...] = (
    "x", "", "12abc", 7, -1, 0, 1.5, 10**40, True, None, [], [1, "a"], {}, {"a": [1]},
    [[["deep"]]],
)
DEEP_LEVELS = (200, 5_000, 100_000)


def deep(levels: int, open_: str = "[") -> str:
    """JSON text nested `levels` deep (lists or objects)."""
    if open_ == "[":
        return "[" * levels + "]" * levels
    return '{"a":' * levels + "1" + "}" * levels


@dataclass
class LogRecord:
    prefix: bytes  # glog prefix up to the JSON
    meta: Any  # decoded metadata (None when the header is not JSON)
    header: bytes  # the original header line (without newline)
    payload: list[bytes]  # payload lines (with their TAB), without newlines
    line: int = 0  # 1-based line number of the header in the original log


def split_records(data: bytes) -> tuple[list[bytes], list[LogRecord]]:
    """(lines before the first header, records)."""
    lead: list[bytes] = []
    records: list[LogRecord] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        m = _HEADER.match(line)
        if m:
            try:
                meta = json.loads(m.group(2))
            except ValueError:
                meta = None
            records.append(LogRecord(m.group(1), meta, line, [], number))
        elif records:
            records[-1].payload.append(line)
        else:
            lead.append(line)
    return lead, records


def join_records(lead: list[bytes], records: list[LogRecord]) -> bytes:
    lines = list(lead)
    for r in records:
        lines.append(r.header)
        lines.extend(r.payload)
    return b"\n".join(lines)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (dict keys and list indices), the root included."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:20]):
            out += _paths(v, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value.get(head), rest, new)}
    out = list(value)
    out[head] = _replace(out[head], rest, new)
    return out


def payload_json(record: LogRecord) -> Any:
    if not record.payload:
        return None
    text = b"\n".join(p[1:] if p.startswith(b"\t") else p for p in record.payload)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _dump(value: Any, confuser: Any) -> str:
    text = json.dumps(value)
    if isinstance(confuser, DeepMarker):  # splice the deep text in place of its marker string
        text = text.replace(json.dumps(confuser.token), deep(confuser.levels, confuser.open_))
    return text


@dataclass(frozen=True)
class DeepMarker:
    levels: int
    open_: str

    @property
    def token(self) -> str:
        return f"\0DEEP{self.levels}{self.open_}"


@dataclass(frozen=True)
class Mutation:
    record: int  # index among records
    where: str  # "meta" | "payload"
    path: tuple[Any, ...]
    value: Any  # a confuser or a DeepMarker

    def describe(self) -> str:
        v = repr(self.value)
        if isinstance(self.value, DeepMarker):
            v = f"deep{self.value.open_}x{self.value.levels}"
        return f"record {self.record} {self.where}{list(self.path)} := {v[:40]}"


def apply(lead: list[bytes], records: list[LogRecord], m: Mutation) -> bytes:
    """The log with mutation `m` applied to one record (others untouched)."""
    rec = records[m.record]
    new = m.value.token if isinstance(m.value, DeepMarker) else m.value
    if m.where == "meta":
        meta = _replace(rec.meta, m.path, new)
        header = rec.prefix + _dump(meta, m.value).encode()
        changed = LogRecord(rec.prefix, meta, header, rec.payload, rec.line)
    else:
        data = _replace(payload_json(rec), m.path, new)
        payload = [b"\t" + _dump(data, m.value).encode()]
        changed = LogRecord(rec.prefix, rec.meta, rec.header, payload, rec.line)
    return join_records(lead, [*records[: m.record], changed, *records[m.record + 1 :]])


@st.composite
def mutations(draw: st.DrawFn, records: list[LogRecord]) -> Mutation:
    """A type-confusing or deep-nesting change to one value of one real record."""
    candidates = [i for i, r in enumerate(records) if isinstance(r.meta, dict)]
    index = draw(st.sampled_from(candidates))
    rec = records[index]
    payload = payload_json(rec)
    where = "payload" if payload is not None and draw(st.booleans()) else "meta"
    target = payload if where == "payload" else rec.meta
    path = draw(st.sampled_from(_paths(target)))
    if where == "meta" and not path:
        path = (draw(st.sampled_from(sorted(rec.meta))),)
    value: Any
    if draw(st.integers(0, 4)) == 0:
        value = DeepMarker(draw(st.sampled_from(DEEP_LEVELS)), draw(st.sampled_from("[{")))
    else:
        value = draw(st.sampled_from(CONFUSERS))
    return Mutation(index, where, path, value)


def real_log(name: str) -> bytes:
    """A real log by name: a bundled fixture, a bench/data log or a shared tlparse input."""
    p = Path(name)
    if not p.is_absolute():
        p = ROOT / name
    data = p.read_bytes()
    if p.suffix == ".gz":
        return gzip.decompress(data)
    if p.suffix == ".xz":
        return lzma.decompress(data)
    return data


def first_record(records: list[LogRecord], kind: str, test: Any = None) -> int:
    """Index of the first record of `kind` (an artifact name for artifacts) passing `test`."""
    for i, r in enumerate(records):
        meta = r.meta if isinstance(r.meta, dict) else {}
        name = meta.get("artifact", {}).get("name") if "artifact" in meta else None
        if (kind in meta or name == kind) and (test is None or test(r)):
            return i
    raise LookupError(kind)


def every_mutation_site(records: list[LogRecord]) -> list[tuple[int, str, tuple[Any, ...]]]:
    """All (record, where, path) a mutation can hit, for exhaustive sweeps in the bench."""
    out = []
    for i, r in enumerate(records):
        if not isinstance(r.meta, dict):
            continue
        out += [(i, "meta", p) for p in _paths(r.meta) if p]
        payload = payload_json(r)
        if payload is not None:
            out += [(i, "payload", p) for p in _paths(payload)]
    return out
