"""Exported kernels that run: one file per kernel (C++, Triton, extern call), each partition's
output code and a repro of each Dynamo graph, every one stating the machine it was generated for
and refusing any other before it loads compiled code; and an index of them all.

`export_compiles` writes every compile (ranks and runs too) of a session; `export_kernels`
one compile's kernels. Both are torch-free: they only read the session."""

from compiler_core.export.kernel_files import (
    export_compiles,
    export_kernels,
    kernel_file_path,
    kernel_source_lines,
    select_compiles,
)
from compiler_core.export.machine_stamp import REFUSED_EXIT

__all__ = [
    "REFUSED_EXIT",
    "export_compiles",
    "export_kernels",
    "kernel_file_path",
    "kernel_source_lines",
    "select_compiles",
]
