"""What an output code's `call()` hands each kernel: the arguments of every launch, resolved to
buffers with concrete shapes, strides and dtypes, so a kernel can be run alone.

Inductor's output code is Python, so it is read with `ast`, not with regular expressions: the
statements of `call()` (and of the `with` blocks inside it) are walked in order, keeping

- the graph inputs: `assert_size_stride(arg0_1, (8, 16), (16, 1))`, else `get_args()`'s
  `rand_strided(...)` line (which also holds the value of every size symbol: `arg2_1 = 16`);
- the buffers: `buf0 = empty_strided_cpu((s33, 64), (64, 1), torch.float32)`; aliases
  (`buf1 = buf0; del buf0  # reuse`) and views (`reinterpret_tensor(buf0, size, stride, offset)`);
- the size symbols (`s33 = arg2_1`, `s0 = arg0_1.size(0)`, `ks0 = 2*s0`), evaluated to integers;
- every launch: a generated kernel `cpp_fused_x(buf1, s33)` or `triton_x.run(..., stream=stream0)`,
  an extern call `extern_kernels.mm(..., out=buf3)` or `buf8 = torch.ops.aten.x.default(...)`.

A buffer an extern call returns (`buf8 = aten.sdpa(...)`, `buf9 = buf8[0]`) has no shape in the
code; `extern_outputs` (the session's post-grad node metadata) supplies it. A buffer whose shape
cannot be known stays out of `specs`, and a launch that reads it cannot be run alone.
Torch-free: exporting a log needs no torch.
"""

from __future__ import annotations

import ast
import contextlib
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from compiler_core.trace.output_code import extern_name

Dims = tuple[int, ...]
# `extern "C" void kernel(float* in_out_ptr0, ...)` (C++) or `def triton_x(in_ptr0, ...)` (Triton)
_PARAMS = re.compile(r'extern\s+"C"[^(]*\(([^)]*)\)|^def \w+\(([^)]*)\)', re.M)
_EMPTY = ("empty_strided_cpu", "empty_strided_cuda", "empty_strided_xpu", "empty_strided")
_BINOPS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


@dataclass(frozen=True)
class TensorSpec:
    """A strided tensor: what `empty_strided` would make (`offset` into its own storage)."""

    shape: Dims
    stride: Dims
    dtype: str  # torch dtype name: float32, int64, bool...
    offset: int = 0
    device: str = "cpu"

    def storage_size(self) -> int:
        """Elements the storage needs so that every index of the view lies inside it."""
        if any(s == 0 for s in self.shape):
            return self.offset
        return (
            self.offset + 1 + sum((s - 1) * abs(st) for s, st in zip(self.shape, self.stride, strict=False))
        )


@dataclass(frozen=True)
class Arg:
    """One launch argument: a view of buffer `root`, a size symbol's value, or a literal."""

    text: str  # as written in the output code
    root: str = ""  # the buffer whose storage it uses ("" for a number)
    view: TensorSpec | None = None  # the tensor the kernel sees (None: the root as it is)
    value: int | float | None = None  # a number (size symbol or literal)
    keyword: str = ""  # `out=` and friends


@dataclass
class Launch:
    callee: str  # cpp/triton kernel name, or the extern callee `extern_kernels.mm`
    kind: str  # kernel | extern
    args: list[Arg]
    line: int  # 1-based line in the output code
    name: str = ""  # the session's kernel name (`extern_kernels.mm:2` for the 2nd mm call)
    result: str = ""  # buffer an extern call returns into
    resolved: bool = True  # every tensor argument has a known shape
    fresh: frozenset[str] = frozenset()  # argument buffers nothing wrote before this launch
    # argument buffers holding, at this launch, the value of a known post-grad node (an extern
    # op's output that no generated kernel has been handed since)
    producers: dict[str, str] = field(default_factory=dict)


@dataclass
class CallPlan:
    inputs: list[str] = field(default_factory=list)
    symbols: dict[str, int] = field(default_factory=dict)
    specs: dict[str, TensorSpec] = field(default_factory=dict)  # root buffers and graph inputs
    roots: dict[str, tuple[str, TensorSpec | None]] = field(default_factory=dict)  # alias -> (root, view)
    launches: list[Launch] = field(default_factory=list)

    def launches_of(self, name: str) -> list[Launch]:
        return [x for x in self.launches if x.name == name]


def kernel_params(source: str) -> list[str]:
    """Parameter names of a generated kernel, in order: Inductor names them `in_ptr0`,
    `out_ptr1`, `in_out_ptr0`, `ks0`, `xnumel`..., the same in C++ and Triton."""
    m = _PARAMS.search(source)
    if not m:
        return []
    text = m.group(1) if m.group(1) is not None else m.group(2)
    return [p.split(":")[0].strip().split()[-1].lstrip("*&") for p in text.split(",") if p.strip()]


def _writes(param: str) -> bool:
    return param.startswith(("out_ptr", "in_out_ptr"))


class _UnknownError(Exception):
    """An expression this reader cannot evaluate (a symbol it never saw)."""


def plan_calls(
    code: str,
    kernels: Mapping[str, list[str]],
    extern_outputs: Mapping[str, tuple[tuple[str, TensorSpec], ...]] | None = None,
) -> CallPlan | None:
    """The launches of `code`'s `call()`; `kernels` maps its generated kernels to their parameter
    names (`kernel_params`; an empty list: unknown, every argument may be written), `extern_outputs`
    maps an extern kernel's session name to the (post-grad node, tensor) pairs it returns. None
    if `code` is no Python this reader can parse or has no `call()`."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    call = funcs.get("call") or funcs.get("_run_graph")
    if call is None:
        return None
    reader = _Reader(kernels, extern_outputs or {})
    reader.partitions = {int(name[len("partition_"):]): f.body for name, f in funcs.items()
                         if name.startswith("partition_") and name[len("partition_"):].isdigit()}
    if "get_args" in funcs:
        reader.read_get_args(funcs["get_args"].body)
    reader.walk(call.body)
    return reader.plan


class _Reader:
    def __init__(
        self,
        kernels: Mapping[str, list[str]],
        extern_outputs: Mapping[str, tuple[tuple[str, TensorSpec], ...]],
    ) -> None:
        self.kernels = kernels
        self.extern_outputs = extern_outputs
        self.plan = CallPlan()
        self.example: dict[str, TensorSpec | int] = {}  # get_args(): input -> tensor or int
        self.results: dict[str, tuple[tuple[str, TensorSpec], ...]] = {}  # extern result -> its parts
        self.extern_seen: dict[str, int] = {}
        self.touched: set[str] = set()  # buffers some launch has written (or may have)
        self.producers: dict[str, str] = {}  # buffer -> the node whose value it holds now
        # Under graph partitioning `call()` hands stretches of its launches to `partition_N(args)`
        # (`(buf1, buf3) = self.partitions[0](partition0_args)`), which unpack and return the
        # caller's own buffer names: their bodies are read where they are called.
        self.partitions: dict[int, list[ast.stmt]] = {}
        self._inside: set[int] = set()

    def add(self, launch: Launch) -> Launch:
        roots = {a.root for a in launch.args if a.root}
        launch.fresh = frozenset(r for r in roots if r not in self.touched and r not in self.plan.inputs)
        launch.producers = {r: self.producers[r] for r in roots if r in self.producers}
        self.touched |= roots | {launch.result}
        if launch.kind == "kernel":  # it may write the buffers of its output parameters
            params = self.kernels.get(launch.callee) or []
            for i, a in enumerate(launch.args):
                if a.root and (a.keyword or i >= len(params) or _writes(params[i])):
                    self.producers.pop(a.root, None)
        else:
            outs = self.extern_outputs.get(launch.name, ())
            written = [a for a in launch.args if a.keyword == "out" and a.root and a.view is None]
            if len(outs) == 1 and len(written) == 1:
                self.producers[written[0].root] = outs[0][0]
        self.plan.launches.append(launch)
        return launch

    # -- expressions --------------------------------------------------------------------------
    def number(self, node: ast.expr) -> int:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.plan.symbols:
            return self.plan.symbols[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.number(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](self.number(node.left), self.number(node.right))
        raise _UnknownError(ast.unparse(node))

    def dims(self, node: ast.expr) -> Dims:
        if not isinstance(node, ast.Tuple | ast.List):
            raise _UnknownError(ast.unparse(node))
        return tuple(self.number(e) for e in node.elts)

    @staticmethod
    def dtype(node: ast.expr | None) -> str:
        return node.attr if isinstance(node, ast.Attribute) else ""

    def spec_of(self, name: str) -> TensorSpec | None:
        root, view = self.plan.roots.get(name, (name, None))
        return view if view is not None else self.plan.specs.get(root)

    # -- get_args() ----------------------------------------------------------------------------
    def read_get_args(self, body: list[ast.stmt]) -> None:
        for st in body:
            if not (
                isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            ):
                continue
            name, v = st.targets[0].id, st.value
            if isinstance(v, ast.Constant) and isinstance(v.value, int):
                self.example[name] = v.value
            elif isinstance(v, ast.Call) and _callee(v) == "rand_strided" and len(v.args) >= 2:
                kw = {k.arg: k.value for k in v.keywords}
                try:
                    dev = kw.get("device")
                    device = dev.value if isinstance(dev, ast.Constant) else "cpu"
                    self.example[name] = TensorSpec(
                        self.dims(v.args[0]),
                        self.dims(v.args[1]),
                        self.dtype(kw.get("dtype")),
                        device=str(device),
                    )
                except _UnknownError:
                    continue

    # -- call() --------------------------------------------------------------------------------
    def walk(self, body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, ast.With):
                self.walk(st.body)
            elif isinstance(st, ast.Assign) and len(st.targets) == 1:
                self.assign(st.targets[0], st.value, st.lineno)
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                self.expr_call(st.value, st.lineno)

    def assign(self, target: ast.expr, v: ast.expr, line: int) -> None:
        part = _partition_call(v)
        if part is not None and part in self.partitions and part not in self._inside:
            self._inside.add(part)
            self.walk(self.partitions[part])
            return
        if isinstance(target, ast.Tuple) and isinstance(v, ast.Name) and v.id == "args":
            if self._inside:  # a partition unpacks the caller's names again
                return
            self.plan.inputs = [e.id for e in target.elts if isinstance(e, ast.Name)]
            for name in self.plan.inputs:
                ex = self.example.get(name)
                if isinstance(ex, TensorSpec):
                    self.plan.specs[name] = ex
            return
        if not isinstance(target, ast.Name):
            return
        name = target.id
        if isinstance(v, ast.Name):
            ex = self.example.get(v.id)
            if isinstance(ex, int):
                self.plan.symbols[name] = ex
            elif v.id in self.plan.symbols:
                self.plan.symbols[name] = self.plan.symbols[v.id]
            else:
                self.plan.roots[name] = self.plan.roots.get(v.id, (v.id, None))
            return
        if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name):
            parts = self.results.get(v.value.id, ())
            idx = v.slice.value if isinstance(v.slice, ast.Constant) else None
            if isinstance(idx, int) and 0 <= idx < len(parts):
                self.producers[name] = parts[idx][0]
                self.plan.specs[name] = parts[idx][1]
            return
        if isinstance(v, ast.BinOp | ast.UnaryOp | ast.Constant):
            with contextlib.suppress(_UnknownError):
                self.plan.symbols[name] = self.number(v)
            return
        if not isinstance(v, ast.Call):
            return
        callee = _callee(v)
        if callee in _EMPTY and len(v.args) >= 3:
            with contextlib.suppress(_UnknownError):
                self.plan.specs[name] = TensorSpec(
                    self.dims(v.args[0]), self.dims(v.args[1]), self.dtype(v.args[2])
                )
        elif callee == "reinterpret_tensor":
            arg = self.arg(v, "")
            if arg.root:
                self.plan.roots[name] = (arg.root, arg.view)
        elif (
            callee.endswith(".size")
            and isinstance(v.func, ast.Attribute)
            and isinstance(v.func.value, ast.Name)
        ):
            spec = self.spec_of(v.func.value.id)
            dim = v.args[0].value if v.args and isinstance(v.args[0], ast.Constant) else None
            if spec is not None and isinstance(dim, int) and -len(spec.shape) <= dim < len(spec.shape):
                self.plan.symbols[name] = spec.shape[dim]
        elif _is_extern(callee):
            launch = self.extern(v, callee, line, result=name)
            outs = self.extern_outputs.get(launch.name, ())
            self.results[name] = outs
            if len(outs) >= 1:
                self.plan.specs[name] = outs[0][1]
                self.producers[name] = outs[0][0]

    def expr_call(self, v: ast.Call, line: int) -> None:
        callee = _callee(v)
        if callee == "assert_size_stride" and len(v.args) >= 3 and isinstance(v.args[0], ast.Name):
            try:
                old = self.plan.specs.get(v.args[0].id)
                dtype = old.dtype if old else ""
                device = old.device if old else "cpu"
                self.plan.specs[v.args[0].id] = TensorSpec(
                    self.dims(v.args[1]), self.dims(v.args[2]), dtype, device=device
                )
            except _UnknownError:
                pass
            return
        base = callee[: -len(".run")] if callee.endswith(".run") else callee
        if base in self.kernels:
            args = [self.arg(a, "") for a in v.args]
            args += [self.arg(k.value, k.arg or "") for k in v.keywords if k.arg != "stream"]
            self.add(Launch(base, "kernel", args, line, base, resolved=self.resolved(args)))
        elif _is_extern(callee):
            self.extern(v, callee, line)

    def extern(self, v: ast.Call, callee: str, line: int, result: str = "") -> Launch:
        self.extern_seen[callee] = self.extern_seen.get(callee, 0) + 1
        args = [self.arg(a, "") for a in v.args] + [self.arg(k.value, k.arg or "") for k in v.keywords]
        launch = Launch(
            callee,
            "extern",
            args,
            line,
            extern_name(callee, self.extern_seen[callee]),
            result,
            self.resolved(args),
        )
        return self.add(launch)

    def resolved(self, args: list[Arg]) -> bool:
        return all(not a.root or a.view is not None or a.root in self.plan.specs for a in args)

    def arg(self, node: ast.expr, keyword: str) -> Arg:
        text = ast.unparse(node)
        if isinstance(node, ast.Name):
            if node.id in self.plan.symbols:
                return Arg(text, value=self.plan.symbols[node.id], keyword=keyword)
            root, view = self.plan.roots.get(node.id, (node.id, None))
            return Arg(text, root=root, view=view, keyword=keyword)
        if isinstance(node, ast.Call) and _callee(node) == "reinterpret_tensor" and len(node.args) >= 4:
            inner = self.arg(node.args[0], "")
            base = inner.view or self.plan.specs.get(inner.root)
            try:
                shape, stride, off = (
                    self.dims(node.args[1]),
                    self.dims(node.args[2]),
                    self.number(node.args[3]),
                )
            except _UnknownError:
                return Arg(text, root=inner.root, keyword=keyword)
            dtype = base.dtype if base else ""
            device = base.device if base else "cpu"
            return Arg(
                text,
                inner.root,
                TensorSpec(shape, stride, dtype, (base.offset if base else 0) + off, device),
                keyword=keyword,
            )
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int | float)
            and not isinstance(node.value, bool)
        ):
            return Arg(text, value=node.value, keyword=keyword)
        try:
            return Arg(text, value=self.number(node), keyword=keyword)
        except _UnknownError:
            return Arg(text, keyword=keyword)  # True, None, a string, a list: kept as written


def _callee(v: ast.Call) -> str:
    try:
        return ast.unparse(v.func)
    except (ValueError, RecursionError):
        return ""


def _is_extern(callee: str) -> bool:
    return callee.startswith(("extern_kernels.", "aten.", "torch.ops.")) and ".empty" not in callee


def _partition_call(v: ast.expr) -> int | None:
    """N for `self.partitions[N](...)`, else None."""
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Subscript)):
        return None
    target, index = v.func.value, v.func.slice
    if (isinstance(target, ast.Attribute) and target.attr == "partitions"
            and isinstance(index, ast.Constant) and isinstance(index.value, int)):
        return index.value
    return None
