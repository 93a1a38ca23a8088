"""The one JSON parser for data CompileScope did not write itself: log headers and payloads,
stage artifacts, worker events.

Why not `json.loads` everywhere: CPython's decoder recurses once per nesting level, so
`[[[[...` 100k deep raises `RecursionError`, which is not a `ValueError` and escapes any
`except ValueError` around a parser. Worse, a value nested
just under the interpreter's limit parses fine and then blows up later, far from the log line,
when `str()`, `json.dumps` (saving the session) or a tree walk meets it. So nesting is bounded
here, at parse time, where the caller can still say which line was bad.

`MAX_DEPTH` (64) is far above anything torch or CompileScope writes (compilation metrics,
chromium events, provenance maps and our enriched graphs nest at most ~8 deep) and far below
the interpreter's recursion limit, so everything downstream can recurse safely. The depth walk
only runs when the text holds more than `max_depth` brackets at all, so ordinary small payloads
pay two `str.count` calls.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
_decode = json.JSONDecoder().decode


class JsonPayloadError(ValueError):
    """Not JSON, or nested deeper than allowed. `lineno` is the line (1-based) within the text."""

    def __init__(self, message: str, lineno: int = 1) -> None:
        super().__init__(message)
        self.lineno = lineno


def parse_json(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """Decode `text`; raise `JsonPayloadError` (a ValueError) for bad or too deeply nested JSON."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonPayloadError(f"not UTF-8: {exc}") from exc
    try:
        value = _decode(text)
    except RecursionError:
        raise JsonPayloadError(f"JSON nested too deeply (more than {max_depth} levels)") from None
    except ValueError as exc:
        raise JsonPayloadError(str(exc), getattr(exc, "lineno", 1)) from exc
    if text.count("[") + text.count("{") > max_depth and depth_exceeds(value, max_depth):
        raise JsonPayloadError(f"JSON nested too deeply (more than {max_depth} levels)")
    return value


def depth_exceeds(value: Any, max_depth: int) -> bool:
    """Whether `value` nests lists/dicts more than `max_depth` deep (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if level > max_depth:
            return True
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return False
