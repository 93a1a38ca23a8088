"""Memoised parsing for one import: repeated compiles log byte-identical payloads.

Long training logs, concatenated logs and per-rank logs repeat the same graph text, output code
and guards many times. Everything parsed from them is a frozen dataclass, so one parse can be
shared by every compile that logged the same text. The memo lives for one `build_session` call
only (it would otherwise pin large texts after the session is gone). Keys are the texts
themselves: Python caches a str's hash, and equal-length texts compare with memcmp.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class ParseMemo:
    """`get(key, make)`: `make()` once per distinct key; counts hits so benches can report them."""

    def __init__(self) -> None:
        self._values: dict[Hashable, Any] = {}
        self.hits = 0

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        try:
            value: T = self._values[key]
        except KeyError:
            value = self._values[key] = make()
        else:
            self.hits += 1
        return value

    def __len__(self) -> int:
        return len(self._values)
