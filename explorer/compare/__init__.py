"""The before/after comparison window (the diff itself is the core's: compiler_core/diff)."""

from explorer.compare.compare_opener import CompareOpener
from explorer.compare.compare_window import CompareWindow
from explorer.compare.fix_list_view import FixListView
from explorer.compare.graph_rows_model import GraphRowsModel

__all__ = ["CompareOpener", "CompareWindow", "FixListView", "GraphRowsModel"]
