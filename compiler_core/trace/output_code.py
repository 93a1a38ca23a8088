"""Kernels in Inductor's output code (the `inductor_output_code` payload).

Generated kernels are module-level assignments `name = async_compile.triton('name', '''...''')`
or `name = async_compile.cpp_pybinding([...], r'''...''')`; the comment block above a definition
(Triton, and C++ with comment_origin) and the comment above its call in `call()` (or in a
`partition_N()` under graph partitioning) carry
`# Topologically Sorted Source Nodes: [...]`, `Original ATen: [...]` and, when Inductor adds it,
`# Source node to ATen node mapping:` lines `#   src => post_grad_a, post_grad_b`. Calls to
`extern_kernels.*` and `aten.*`/`torch.ops.*` inside `call()` become extern kernels named
`<callee>:<n>` (n-th such call of the partition, 1-based) so repeated addmm calls stay distinct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DEF = re.compile(r"^(\w+) = async_compile\.(\w+)\(", re.M)
_SORTED = re.compile(
    r"#\s*(?:Topologically Sorted|Unsorted) Source Nodes: \[([^\]]*)\], Original ATen: \[([^\]]*)\]"
)
_MAPPING = re.compile(r"^#\s+(\S+) => (.+)$")
_FRAGMENT_NODE = re.compile(r"^#\s+%(\w+) : .*?= call_function\[")
_EXTERN = re.compile(r"^\s*(?:\w+ = )?((?:extern_kernels|aten|torch\.ops\.\w+)\.[\w.]+)\(")
# The functions that launch kernels: `call()` (a method of `Runner` under graph partitioning),
# `_run_graph()`, and under graph partitioning (on by default since torch 2.9 when CUDA graphs are
# on: mode="reduce-overhead") the `partition_N()` functions `call()` hands each CUDA-graphable
# stretch to, written above `call()`; their launches are the compile's launches
_LAUNCHER = re.compile(r"^\s*def (?:call|_run_graph|partition_\d+)\(")
_LANG = {"triton": "triton", "cpp_pybinding": "cpp", "cpp": "cpp", "cuda": "cuda", "halide": "halide"}


def extern_name(callee: str, nth: int) -> str:
    """The session's name of the `nth` (1-based) call of `callee` in one output code:
    `extern_kernels.mm:3`. Callees are dotted identifiers, so the last ':' starts the ordinal."""
    return f"{callee}:{nth}"


def split_extern_name(name: str) -> tuple[str, int] | None:
    """(`extern_kernels.mm`, 3) for `extern_kernels.mm:3`; None for a name `extern_name` did not make."""
    callee, sep, nth = name.rpartition(":")
    if not sep or not callee or not nth.isdigit():
        return None
    return callee, int(nth)


@dataclass
class ParsedKernel:
    name: str
    language: str
    source: str = ""
    source_nodes: list[str] = field(default_factory=list)  # "Source Nodes" (Dynamo/pre-grad names)
    post_grad_nodes: list[str] = field(default_factory=list)  # from the node mapping comment
    original_aten: list[str] = field(default_factory=list)
    # `# Graph fragment:` above a generated kernel: the post-grad nodes Inductor lowered into it
    # (for its first call; a kernel reused by other layers runs their counterparts at later calls)
    fragment_nodes: list[str] = field(default_factory=list)
    call_names: list[list[str]] = field(default_factory=list)  # each call's Source Nodes, in order
    calls: list[tuple[int, str]] = field(default_factory=list)  # each call: (1-based line, its text)
    line: int | None = None  # 1-based line in the output code where the definition starts


def parse_output_code(code: str) -> list[ParsedKernel]:
    """Kernel definitions in definition order, then extern calls in call order."""
    lines = code.split("\n")
    kernels: dict[str, ParsedKernel] = {}
    for m in _DEF.finditer(code):
        name, fn = m.group(1), m.group(2)
        if fn not in _LANG:
            continue
        line_no = code.count("\n", 0, m.start())
        k = ParsedKernel(name, _LANG[fn], _kernel_source(code, m.end()), line=line_no + 1)
        _apply_comments(k, _comment_block(lines, line_no))
        kernels[name] = k
    externs = _scan_calls(lines, kernels)
    return [*kernels.values(), *externs]


def _kernel_source(code: str, start: int) -> str:
    """The triple-quoted string literal that follows the definition's opening parenthesis."""
    m = re.compile(r"r?('''|\"\"\")").search(code, start)
    if not m:
        return ""
    end = code.find(m.group(1), m.end())
    if end < 0:
        return code[m.end() :]
    return code[m.end() : end].strip("\n")


def _comment_block(lines: list[str], line_no: int) -> list[str]:
    out: list[str] = []
    i = line_no - 1
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append(lines[i].strip())
        i -= 1
    return out[::-1]


def _apply_comments(k: ParsedKernel, comments: list[str]) -> None:
    for text in comments:
        m = _SORTED.search(text)
        if m:
            _extend(k.source_nodes, _names(m.group(1)))
            _extend(k.original_aten, _names(m.group(2)))
            continue
        mm = _MAPPING.match(text)
        if mm:
            _extend(k.post_grad_nodes, _names(mm.group(2)))
            continue
        fm = _FRAGMENT_NODE.match(text)
        if fm:
            k.fragment_nodes.append(fm.group(1))


def _scan_calls(lines: list[str], kernels: dict[str, ParsedKernel]) -> list[ParsedKernel]:
    """Walk `call()`: attach call-site comments to kernels and collect extern calls."""
    externs: list[ParsedKernel] = []
    counts: dict[str, int] = {}
    in_call = False
    comments: list[str] = []
    after_comment = False
    call_re = re.compile(r"^\s*(\w+)(?:\.run)?\(")
    # Everything before the first launcher function is kernel source (most of a deep model's
    # lines): find it with a substring test instead of stripping every line before it.
    first = next((i for i, line in enumerate(lines) if "def " in line and _LAUNCHER.match(line)), len(lines))
    for i in range(first, len(lines)):
        line = lines[i]
        stripped = line.strip()
        if _LAUNCHER.match(line):
            in_call = True
            continue
        if not in_call:
            continue
        if stripped.startswith("#"):
            if not after_comment:
                comments = []  # a new block replaces one no call consumed
            comments.append(stripped)
            after_comment = True
            continue
        after_comment = False
        if not stripped:
            continue
        m = call_re.match(line)
        if m and m.group(1) in kernels:
            _apply_comments(kernels[m.group(1)], comments)
            kernels[m.group(1)].call_names.append(_call_names(comments))
            kernels[m.group(1)].calls.append((i + 1, stripped))
            comments = []
        else:
            e = _EXTERN.match(line)
            if e and not e.group(1).startswith(("aten.empty", "torch.ops.aten.empty")):
                callee = e.group(1)
                counts[callee] = counts.get(callee, 0) + 1
                k = ParsedKernel(extern_name(callee, counts[callee]), "extern", stripped, line=i + 1)
                _apply_comments(k, comments)
                externs.append(k)
                comments = []
    return externs


def _call_names(comments: list[str]) -> list[str]:
    """The Source Nodes one call's comment block names (empty without one)."""
    for text in comments:
        m = _SORTED.search(text)
        if m:
            return _names(m.group(1))
    return []


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _extend(target: list[str], items: list[str]) -> None:
    """Append the items `target` lacks, in order (a set of what is there: a Source Nodes comment
    of a big fused kernel names dozens of nodes)."""
    have = set(target)
    for item in items:
        if item not in have:
            target.append(item)
            have.add(item)
