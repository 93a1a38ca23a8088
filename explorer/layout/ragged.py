"""Rows of ints held in two numpy arrays, read back as plain lists.

Why: a 50k-node graph's group tree has ~27k groups, each with a list of child groups and one of
member nodes. As Python lists those are 54k objects that every pass of the cyclic collector on
the GUI thread walks for as long as the canvas shows the graph, the young pass after a layout
and every older one. numpy arrays are not tracked by the collector, so a tree holds two
arrays per table instead, and a row is a fresh list when read.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import overload

import numpy as np
from numpy.typing import NDArray


class Ragged(Sequence[list[int]]):
    """Read-only rows; `rows[i]` is a new `list[int]` (changing it changes nothing here)."""

    __slots__ = ("offsets", "values")

    def __init__(self, rows: Iterable[Sequence[int]]) -> None:
        rows = list(rows)
        self.offsets: NDArray[np.int64] = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=self.offsets[1:])
        total = int(self.offsets[-1])
        self.values: NDArray[np.int64] = np.fromiter(itertools.chain.from_iterable(rows), np.int64, total)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, i: int) -> list[int]: ...
    @overload
    def __getitem__(self, i: slice) -> list[list[int]]: ...
    def __getitem__(self, i: int | slice) -> list[int] | list[list[int]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        row: list[int] = self.values[self.offsets[i] : self.offsets[i + 1]].tolist()
        return row

    def lengths(self) -> NDArray[np.int64]:
        return np.diff(self.offsets)
