"""What the menus do: open files, run captures, export. Kept apart from the panes, which only show."""
