"""Dockable panes. Each listens to SessionState and SelectionModel and never calls another pane."""
