"""Explorer state: the Qt-free application model (`app_model`) and its Qt adapters (torch-free).

The adapters load on first use (PEP 562), so `explorer.state.app_model` and the other Qt-free
modules here import without Qt (tests/explorer/test_app_model.py checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.state.app_model import AppModel
    from explorer.state.selection import SelectionModel
    from explorer.state.session_state import SessionState

__all__ = ["AppModel", "SelectionModel", "SessionState"]


def __getattr__(name: str) -> Any:
    if name == "AppModel":
        from explorer.state.app_model import AppModel

        return AppModel
    if name == "SelectionModel":
        from explorer.state.selection import SelectionModel

        return SelectionModel
    if name == "SessionState":
        from explorer.state.session_state import SessionState

        return SessionState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
