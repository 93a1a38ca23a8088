"""A mechanical hint as a change to how the worker runs the same model file, never to the file.

The hints a user can apply without editing code, and how each reaches the compile:

- `capture_scalar_outputs=True` (the fix a `.item()` break names): torch reads
  `TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` from the environment when `torch._dynamo.config` loads.
- `mark_dynamic(x, dim)` (the fix a recompile on a size names): `TORCH_COMPILE_DYNAMIC_SOURCES`
  (`torch.compiler.config.dynamic_sources`), whose entries are Dynamo source names with an
  optional `:dim`, as in `L['x']:0`; the same as calling mark_dynamic before each call.
- `dynamic=True` and a compile mode: the capture's own `dynamic` and `mode` options.
- another `torch._dynamo.config` flag: `TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS=">=0:name=value"`,
  torch's per-graph config override applied to every graph (torch 2.13 and later have it).
- `activation_memory_budget` (a training capture's saved activations traded for recomputation),
  `reorderable_logging_functions` (a `print` or `warnings.warn` that breaks the graph, moved
  after it) and `ignore_logging_functions` (a `logger.info` that breaks it, skipped under
  compile): torch reads no variable for these, so the plan sets one of ours and the worker
  applies it around the capture (compiler_core/capture/hooks/hint_config.py). Only the
  well-known logging functions of that module's table have a plan.

So a re-run is an environment and two capture options, and the worker needs no new protocol.
Hints that need a code change (a data-dependent branch, a print of a shape) have no plan
(`plan_for` returns None); the GUI shows the line and the suggested edit instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compiler_core.capture.hooks.hint_config import (
    ENV_IGNORED,
    ENV_MEMORY_BUDGET,
    ENV_REORDERABLE,
    IGNORABLE,
    REORDERABLE,
    budget_value,
)
from compiler_core.session.model import GraphBreak

ENV_SCALARS = "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS"
ENV_DYNAMIC_SOURCES = "TORCH_COMPILE_DYNAMIC_SOURCES"
ENV_DYNAMO_CONFIGS = "TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS"
KINDS = ("capture_scalar_outputs", "mark_dynamic", "dynamic", "mode", "dynamo_config",
         "activation_memory_budget", "reorderable_logging_functions", "ignore_logging_functions")
#: Short names a command line may use for the logging functions (their dotted names also work).
LOGGING_ALIASES = {"print": "builtins.print", "warn": "warnings.warn",
                   **{m: f"logging.Logger.{m}" for m in ("debug", "info", "warning", "error")},
                   **{f"Logger.{m}": f"logging.Logger.{m}" for m in ("debug", "info", "warning", "error")}}
_BUDGET_ARG = re.compile(r"^activation_memory_budget\s*[=:]\s*(\S+)$")
_LOGGER_CALL = re.compile(r"\.(debug|info|warning|error)\s*\(")
_ARG_TYPES = re.compile(r"argument types \[([^\]]*)\]")
# what Dynamo can reorder a call with: tensors, constants and f-strings (an f-string's type is str)
_REORDERABLE_ARGS = frozenset({"Tensor", "Parameter", "str", "int", "float", "bool", "NoneType"})
_INPUT_DIM = re.compile(r"^input (.+) dim (\d+)$")
_FLAG = re.compile(r"^\w+$")
_VALUE = re.compile(r"^(True|False|-?\d+(\.\d+)?|'[^',;]*')$")


@dataclass(frozen=True)
class Hint:
    """One mechanical change: `kind` is one of KINDS; `source`/`dim` name the input for
    mark_dynamic (`x` or a Dynamo source such as `L['x']`), `value` the mode, `flag=value`, the
    budget (`0.5`) or a logging function's dotted name (`builtins.print`)."""

    kind: str
    source: str = ""
    dim: int | None = None
    value: str = ""

    def as_arg(self) -> str:
        """The hint as `diff MODEL.py --apply` takes it (`parse_hint`'s forms)."""
        if self.kind == "mark_dynamic":
            return f"mark_dynamic:{self.source}:{self.dim}"
        if self.kind == "mode":
            return f"mode:{self.value}"
        if self.kind == "dynamo_config":
            return f"config:{self.value}"
        if self.kind == "activation_memory_budget":
            return f"activation_memory_budget={self.value}"
        if self.kind in ("reorderable_logging_functions", "ignore_logging_functions"):
            return f"{self.kind}:{self.value}"
        return self.kind

    def in_words(self) -> str:
        if self.kind == "capture_scalar_outputs":
            return "torch._dynamo.config.capture_scalar_outputs = True"
        if self.kind == "mark_dynamic":
            return f"torch._dynamo.mark_dynamic({self.source}, {self.dim})"
        if self.kind == "dynamic":
            return "torch.compile(..., dynamic=True)"
        if self.kind == "mode":
            return f'torch.compile(..., mode="{self.value}")'
        if self.kind == "activation_memory_budget":
            return f"torch._functorch.config.activation_memory_budget = {self.value}"
        if self.kind == "reorderable_logging_functions":
            return f"torch._dynamo.config.reorderable_logging_functions.add({_shown(self.value)})"
        if self.kind == "ignore_logging_functions":
            return (f"torch._dynamo.config.ignore_logging_functions.add({self.value}) "
                    "(the call is skipped under compile)")
        return f"torch._dynamo.config.{self.value}"


def _shown(dotted: str) -> str:
    """`builtins.print` as code writes it: `print`."""
    return dotted.removeprefix("builtins.")


@dataclass(frozen=True)
class RerunPlan:
    """How the worker runs the file with the hint: its environment additions and the capture's
    `mode`/`dynamic` (None: as the first run had them)."""

    hint: Hint
    env: dict[str, str] = field(default_factory=dict)
    mode: str | None = None
    dynamic: bool | None = None


def dynamo_source(name: str) -> str:
    """`x` → `L['x']` (a local of the compiled frame, as Dynamo names it); a name already in
    Dynamo's form is kept."""
    return name if name.startswith(("L[", "G[")) else f"L['{name}']"


def plan_for(hint: Hint) -> RerunPlan | None:
    """The plan of a mechanical hint; None for a hint this module cannot apply safely (an
    unknown kind, a flag value that is not a plain literal, a mark_dynamic without a dim)."""
    if hint.kind == "capture_scalar_outputs":
        return RerunPlan(hint, env={ENV_SCALARS: "1"})
    if hint.kind == "mark_dynamic" and hint.source and hint.dim is not None and hint.dim >= 0:
        return RerunPlan(hint, env={ENV_DYNAMIC_SOURCES: f"{dynamo_source(hint.source)}:{hint.dim}"})
    if hint.kind == "dynamic":
        return RerunPlan(hint, dynamic=True)
    if hint.kind == "mode" and hint.value:
        return RerunPlan(hint, mode=hint.value)
    if hint.kind == "dynamo_config":
        name, _, value = hint.value.partition("=")
        if _FLAG.match(name.strip()) and _VALUE.match(value.strip()):
            return RerunPlan(hint, env={ENV_DYNAMO_CONFIGS: f">=0:{name.strip()}={value.strip()}"})
    if hint.kind == "activation_memory_budget":
        try:
            return RerunPlan(hint, env={ENV_MEMORY_BUDGET: str(budget_value(hint.value))})
        except ValueError:
            return None
    if hint.kind == "reorderable_logging_functions" and hint.value in REORDERABLE:
        return RerunPlan(hint, env={ENV_REORDERABLE: hint.value})
    if hint.kind == "ignore_logging_functions" and hint.value in IGNORABLE:
        return RerunPlan(hint, env={ENV_IGNORED: hint.value})
    return None


def hint_for_break(brk: GraphBreak) -> Hint | None:
    """The mechanical hint of a graph break, where it has one: Dynamo's own text names
    `capture_scalar_outputs` for `.item()`, `capture_dynamic_output_shape_ops` for ops whose
    output shape depends on data (nonzero, unique), `reorderable_logging_functions` for a `print`
    or `warnings.warn` it could not trace, and `ignore_logging_functions` for a Logger method
    (whose name only the line's code gives: the break's text names the logger, not the method)."""
    text = " ".join((brk.reason, brk.explanation, *brk.hints))
    if "capture_scalar_outputs" in text:
        return Hint("capture_scalar_outputs")
    if "capture_dynamic_output_shape_ops" in text:
        return Hint("dynamo_config", value="capture_dynamic_output_shape_ops=True")
    if "reorderable_logging_functions" in text:
        if "`print`" in text and _reorderable_args(brk.explanation):
            return Hint("reorderable_logging_functions", value="builtins.print")
        if "warnings.warn`" in text:
            return Hint("reorderable_logging_functions", value="warnings.warn")
    if "ignore_logging_functions" in text or "ignore_logger_methods" in text:
        call = _LOGGER_CALL.search(brk.location.code if brk.location else "")
        if call is not None:
            return Hint("ignore_logging_functions", value=f"logging.Logger.{call.group(1)}")
    return None


def _reorderable_args(explanation: str) -> bool:
    """Whether the argument types Dynamo names (`with argument types ['str', 'Tensor']`) are all
    ones it can reorder a call with: a print of a shape (`Size`) or a list breaks the graph
    again, with the reason that it cannot be reordered, so that break has no plan."""
    found = _ARG_TYPES.search(explanation)
    return found is None or set(re.findall(r"'(\w+)'", found.group(1))) <= _REORDERABLE_ARGS


def hint_for_recompile(guard: str) -> Hint | None:
    """A recompile cause's guard in words (`RecompileCause.guard`, or `RecompileFact.guard` with
    its changes): `input x dim 0 changed 2 → 3` → mark_dynamic(x, 0). Other causes need a code
    change or a choice only the user can make (a dtype, an object's identity)."""
    guard = guard.split(" changed ", 1)[0]
    m = _INPUT_DIM.match(guard)
    if m is None:
        return None
    return Hint("mark_dynamic", source=m.group(1), dim=int(m.group(2)))


def _logging_hint(kind: str, name: str) -> Hint:
    """`reorderable_logging_functions:print` and the like; ValueError for a function the worker
    cannot resolve, or a Logger method asked to be reordered (Dynamo reorders plain functions
    only: a Logger method can be skipped instead)."""
    dotted = LOGGING_ALIASES.get(name, name)
    if kind == "reorderable_logging_functions" and dotted in IGNORABLE:
        raise ValueError(f"Dynamo reorders plain functions only, not a Logger method such as {dotted}; "
                         f"ignore_logging_functions:{dotted} skips the call under compile instead")
    if kind == "ignore_logging_functions" and dotted in REORDERABLE:
        raise ValueError(f"{dotted} is a plain function: reorderable_logging_functions:{dotted} keeps it "
                         "and moves it after the graph")
    known = REORDERABLE if kind == "reorderable_logging_functions" else IGNORABLE
    if dotted not in known:
        raise ValueError(f"not a hint: {kind}:{name}; the logging functions with a plan are "
                         f"{', '.join(known)}")
    return Hint(kind, value=dotted)


def parse_hint(text: str) -> Hint:
    """A hint as typed on a command line: `capture_scalar_outputs`, `mark_dynamic:x:0`,
    `dynamic`, `mode:max-autotune`, `config:name=value`, `activation_memory_budget=0.5`,
    `reorderable_logging_functions:print` or `ignore_logging_functions:logging.Logger.info`.
    ValueError says the accepted forms."""
    budget = _BUDGET_ARG.match(text.strip())
    if budget is not None:
        try:
            return Hint("activation_memory_budget", value=str(budget_value(budget.group(1))))
        except ValueError:
            raise ValueError(f"not a hint: {text!r}; activation_memory_budget takes a number "
                             "in [0, 1]") from None
    kind, _, rest = text.strip().partition(":")
    if kind in ("reorderable_logging_functions", "ignore_logging_functions") and rest:
        return _logging_hint(kind, rest.strip())
    if kind in ("capture_scalar_outputs", "dynamic") and not rest:
        return Hint(kind)
    if kind == "mark_dynamic":
        source, _, dim = rest.rpartition(":")
        if source and dim.isdigit():
            return Hint(kind, source=source, dim=int(dim))
    if kind == "mode" and rest:
        return Hint(kind, value=rest)
    if kind == "config" and "=" in rest:
        return Hint("dynamo_config", value=rest)
    raise ValueError(f"not a hint: {text!r}; one of capture_scalar_outputs, mark_dynamic:INPUT:DIM, dynamic, "
                     "mode:MODE, config:FLAG=VALUE, activation_memory_budget=0..1, "
                     "reorderable_logging_functions:FUNCTION, ignore_logging_functions:LOGGER_METHOD")
