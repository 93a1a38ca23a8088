"""The Qt adapter of the one selection every pane shares (back/forward history included).

The selection and its related closure live in the Qt-free model (`app_model.Selection`, which
looks links up through the model's one link index); this QObject re-emits its changes as Qt
signals and forwards the calls. A pane calls `select(...)` with the refs the user clicked and
reacts to `selectionChanged` by highlighting its own part of `highlighted`.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal

from compiler_core.session import Ref
from explorer.state.app_model import AppModel, Selection


class SelectionModel(QObject):
    """Signals:

    - `selectionChanged(frozenset[Ref])`: the refs the user selected (may be empty).
    - `historyChanged()`: can_back/can_forward may have changed.
    """

    selectionChanged = Signal(object)  # noqa: N815 (Qt signal naming)
    historyChanged = Signal()  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QObject | None = None, model: AppModel | None = None) -> None:
        super().__init__(parent)
        self._model: Selection = (model if model is not None else AppModel()).selection
        self._model.changed.connect(self.selectionChanged.emit)
        self._model.history_changed.connect(lambda _none: self.historyChanged.emit())

    @property
    def selected(self) -> frozenset[Ref]:
        return self._model.selected

    @property
    def related(self) -> frozenset[Ref]:
        """Everything linked to the selection, excluding the selection itself."""
        return self._model.related

    @property
    def highlighted(self) -> frozenset[Ref]:
        """Selection plus related: what panes should highlight."""
        return self._model.highlighted

    def select(self, refs: Iterable[Ref]) -> None:
        self._model.select(refs)

    def clear(self) -> None:
        self._model.clear()

    def can_back(self) -> bool:
        return self._model.can_back()

    def can_forward(self) -> bool:
        return self._model.can_forward()

    def back(self) -> None:
        self._model.back()

    def forward(self) -> None:
        self._model.forward()
