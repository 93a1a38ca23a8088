"""Explorer state: the Qt-free application model (`app_model`) and its Qt adapters (torch-free)."""

from explorer.state.app_model import AppModel
from explorer.state.selection import SelectionModel
from explorer.state.session_state import SessionState

__all__ = ["AppModel", "SelectionModel", "SessionState"]
