"""The one selection every pane shares, with back/forward history.

Panes never call each other (glue's model): a pane calls `select(...)` with the refs the user
clicked, and every pane reacts to `selectionChanged` by highlighting its own part of
`related` (the link closure computed once here, so each pane need not walk the index itself).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal

from compiler_core.session import LinkIndex, Ref

_HISTORY_LIMIT = 200


class SelectionModel(QObject):
    """Signals:

    - `selectionChanged(frozenset[Ref])`: the refs the user selected (may be empty).
    - `historyChanged()`: can_back/can_forward may have changed.
    """

    selectionChanged = Signal(object)  # noqa: N815 (Qt signal naming)
    historyChanged = Signal()  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._index = LinkIndex({})
        self._selected: frozenset[Ref] = frozenset()
        self._related: frozenset[Ref] = frozenset()
        self._back: list[frozenset[Ref]] = []
        self._forward: list[frozenset[Ref]] = []

    def set_links(self, index: LinkIndex) -> None:
        """A new session: forget selection and history (old refs mean nothing now)."""
        self._index = index
        self._back.clear()
        self._forward.clear()
        self._apply(frozenset())
        self.historyChanged.emit()

    @property
    def selected(self) -> frozenset[Ref]:
        return self._selected

    @property
    def related(self) -> frozenset[Ref]:
        """Everything linked to the selection, excluding the selection itself."""
        return self._related

    @property
    def highlighted(self) -> frozenset[Ref]:
        """Selection plus related: what panes should highlight."""
        return self._selected | self._related

    def select(self, refs: Iterable[Ref]) -> None:
        new = frozenset(refs)
        if new == self._selected:
            return
        if self._selected:
            self._back.append(self._selected)
            del self._back[:-_HISTORY_LIMIT]
        self._forward.clear()
        self._apply(new)
        self.historyChanged.emit()

    def clear(self) -> None:
        self.select(())

    def can_back(self) -> bool:
        return bool(self._back)

    def can_forward(self) -> bool:
        return bool(self._forward)

    def back(self) -> None:
        if not self._back:
            return
        self._forward.append(self._selected)
        self._apply(self._back.pop())
        self.historyChanged.emit()

    def forward(self) -> None:
        if not self._forward:
            return
        self._back.append(self._selected)
        self._apply(self._forward.pop())
        self.historyChanged.emit()

    def _apply(self, refs: frozenset[Ref]) -> None:
        self._selected = refs
        self._related = self._index.related_all(refs) - refs
        self.selectionChanged.emit(refs)
