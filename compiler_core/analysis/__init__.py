"""Session building: trace records → `Session` (shared by live capture and log import)."""

from compiler_core.analysis.session_builder import build_session, import_trace

__all__ = ["build_session", "import_trace"]
