"""Every private torch access of CompileScope (filled in below)."""
