"""Explorer state: the loaded session, the current compile and the shared selection (Qt, torch-free)."""

from explorer.state.selection import SelectionModel
from explorer.state.session_state import SessionState

__all__ = ["SelectionModel", "SessionState"]
