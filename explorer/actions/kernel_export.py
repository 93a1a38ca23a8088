"""Export ▸ Kernels: the engine lives in `compiler_core.export` (the CLI's `export` command uses
the same one); this module only names what the explorer calls, so older imports keep working."""

from __future__ import annotations

from compiler_core.export import export_compiles, export_kernels, kernel_file_path, kernel_source_lines

__all__ = ["export_compiles", "export_kernels", "kernel_file_path", "kernel_source_lines"]
