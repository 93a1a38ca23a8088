"""The Overview as plain values: a verdict line and sections of one-line facts, each with its refs.

One model serves the Overview pane, the HTML report and the CLI: the GUI renders it, the report
writes it, neither computes a figure of its own. A fact is one line a person reads ("GB0124
Tensor.item() at model.py:18 splits 2 graphs"), an optional detail (the fix, where the guard
came from) and the refs a click selects. `as_dict` gives JSON with refs in their storage form
(`Ref.encode`), so a saved overview names the same things a session does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from compiler_core.session.refs import Ref


class Level(str, Enum):
    """How a fact reads: `warning` is something to fix or distrust, `info` a plain figure."""

    INFO = "info"
    WARNING = "warning"


@dataclass(frozen=True)
class Fact:
    text: str
    detail: str = ""  # the fix, a guard's origin, why an op fell back; may span lines
    refs: tuple[Ref, ...] = ()
    level: Level = Level.INFO

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "detail": self.detail, "level": self.level.value,
                "refs": [r.encode() for r in self.refs]}  # fmt: skip


@dataclass(frozen=True)
class Section:
    """One question the Overview answers; `headline` is its answer in a line, `facts` the
    evidence, most important first."""

    key: str  # breaks | recompiles | fallbacks | cudagraphs | memory | compile_time | step_time | ...
    title: str
    headline: str
    facts: tuple[Fact, ...] = ()

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.facts if f.level is Level.WARNING)

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "headline": self.headline,
                "facts": [f.as_dict() for f in self.facts]}  # fmt: skip


@dataclass(frozen=True)
class Overview:
    """What the app opens on: `verdict` stated from measurements only, then the sections in the
    order a user fixes things (breaks, recompiles, fallbacks, ..., step time)."""

    verdict: str
    sections: tuple[Section, ...] = ()
    title: str = ""  # the log or session it describes
    notes: tuple[str, ...] = field(default_factory=tuple)  # what the input could not tell

    def section(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.key == key), None)

    def facts(self) -> list[Fact]:
        """Every fact, in the order shown (the index a pane's link carries)."""
        return [f for s in self.sections for f in s.facts]

    def as_dict(self) -> dict[str, Any]:
        return {"title": self.title, "verdict": self.verdict, "notes": list(self.notes),
                "sections": [s.as_dict() for s in self.sections]}  # fmt: skip


def plural(n: int, word: str, many: str = "") -> str:
    """`1 graph break`, `3 graph breaks`, `2 partitions`: counts in the Overview's lines."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def human_bytes(n: float) -> str:
    """`451.8 MiB`: binary units, as the stage panes write sizes."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
