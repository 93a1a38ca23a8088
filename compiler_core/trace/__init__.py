"""Structured-trace (TORCH_TRACE) reading: records, compile ids, FX text and output code."""

from compiler_core.trace.compile_ids import compile_id_of
from compiler_core.trace.fx_text import parse_annotation, parse_graph
from compiler_core.trace.output_code import parse_output_code
from compiler_core.trace.records import Record, RecordReader, read_records
from compiler_core.trace.trace_folders import trace_files

__all__ = [
    "Record",
    "RecordReader",
    "compile_id_of",
    "parse_annotation",
    "parse_graph",
    "parse_output_code",
    "read_records",
    "trace_files",
]
