"""The kinds the kernel-line marker reads each line as, and the marks that depend on them, on real
logs: Triton kernels read through `ast`, C++ kernels through their text."""

from __future__ import annotations

from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.analysis.kernel_line_kinds import def_use, read_lines
from compiler_core.session.model import Kernel
from tests.bench_logs import bench_session
from tests.compiler_core.analysis.kernel_line_oracle import text_flow


def _kernel(log: Path, name: str) -> Kernel:
    session = import_trace(log)
    return next(k for c in session.compiles for o in c.inductor for k in o.kernels if k.name == name)


def _by_text(kernel: Kernel) -> dict[str, tuple[str, ...]]:
    lines = kernel.source.split("\n")
    return {line.strip(): kernel.line_nodes.get(str(i), ()) for i, line in enumerate(lines, 1)}


def test_triton_lines_read_through_their_syntax(shared_traces: Path) -> None:
    k = _kernel(shared_traces / "inputs" / "inductor_provenance_jit_cuda_log.txt",
                "triton_poi_fused_addmm_relu_sigmoid_0")  # fmt: skip
    lines = {line.text.strip(): line for line in read_lines(k.source, k.language)}
    load = lines["tmp1 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')"]
    assert (load.kind, load.target, load.pointers, load.indirect) == ("load", "tmp1", ("in_ptr0",), False)
    relu = lines["tmp4 = triton_helpers.maximum(tmp3, tmp2)"]
    assert (relu.kind, relu.operands) == ("compute", ("tmp3", "tmp2"))
    assert relu.expr == "triton_helpers.maximum(tmp3, tmp2)"  # as written, for display
    assert lines["tmp3 = tl.full([1], 0, tl.int32)"].kind == "constant"
    store = lines["tl.store(in_out_ptr0 + (x2), tmp5, xmask)"]
    assert (store.kind, store.store_pointers, store.stored) == ("store", ("in_out_ptr0",), ("tmp5",))
    assert lines["xmask = xindex < xnumel"].kind == "other"


def test_what_a_triton_value_spells_is_read_from_its_syntax() -> None:
    """The op forms, names, numbers and literal of a Triton value come from its tree: `tmp11 / x`
    is no `1 / x` (as a search of its text would say), a negation, `== 0`, a masked select on a
    computed condition and a literal's value and dtype are read from the nodes that write them."""
    source = "\n".join([
        "    tmp3 = tl.full([1], 0, tl.int32)",
        "    tmp4 = triton_helpers.maximum(tmp3, tmp2)",
        "    tmp5 = tmp11 / tmp13",
        "    tmp6 = 1 / tmp5",
        "    tmp7 = -tmp6",
        "    tmp8 = tmp7 == 0",
        '    tmp9 = tl.where(tmp8, tmp7, float("-inf"))',
        "    tmp10 = tmp9.to(tl.float32)",
    ])  # fmt: skip
    lines = {line.target: line for line in read_lines(source, "triton")}
    full = lines["tmp3"]
    assert (full.kind, full.literal, full.dtype, full.numbers) == ("constant", 0.0, "i32", {0.0, 1.0})
    assert full.spells == {"tl.full("}
    relu = lines["tmp4"]
    assert "maximum" in relu.spells and {"triton_helpers", "maximum"} <= relu.words
    assert "maximum" not in relu.named and {"tmp3", "tmp2"} <= relu.named  # an attribute names no node
    assert lines["tmp5"].spells == {" / "} and lines["tmp6"].spells == {" / ", "1 / "}
    assert lines["tmp7"].spells == {"-tmp"} and lines["tmp8"].spells == {" == ", "== 0"}
    select = lines["tmp9"]
    assert {"where", "tl.where(tmp"} <= select.spells and select.numbers == {float("-inf")}
    assert (lines["tmp10"].spells, lines["tmp10"].cast, lines["tmp10"].literal) == ({".to("}, True, None)


def test_welford_step_spanning_lines_is_one_statement() -> None:
    """A welford combine written over several lines is read whole, on its first line, and marks
    the batch norm's `var_mean`."""
    out = next(o for o in bench_session("tv_resnet_breaks").compiles[0].inductor if o.graph == "forward")
    k = next(k for k in out.kernels if k.name == "triton_red_fused__native_batch_norm_legit_functional_6")
    (line, i) = next((x, i) for i, x in enumerate(read_lines(k.source, k.language), 1) if x.kind == "multi")
    assert line.names == ("tmp2_mean_next", "tmp2_m2_next", "tmp2_weight_next")
    assert line.accumulators == ("tmp2_mean", "tmp2_m2", "tmp2_weight")
    assert k.source.split("\n")[i - 1].strip() != line.text.strip()  # it did span lines
    assert k.line_nodes[str(i)] == ("var_mean",)


def test_masked_plain_load_is_no_gather() -> None:
    """Rotary embedding's `cat` loads a half of `mm` under a mask that holds a `tmp`; its address
    holds none, so the load reads `mm` and computes no `index` gather."""
    out = bench_session("hf_llama_infer").compiles[0].inductor[0]
    k = next(k for k in out.kernels if k.name.endswith("_where_4"))
    lines = _by_text(k)
    masked = [t for t in lines if t.startswith("tmp12 = tl.load(") and "tmp11 & xmask" in t]
    assert masked and lines[masked[0]] == ("mm",)


def test_cpp_scalar_tail_is_marked_as_its_vector_body(shared_traces: Path) -> None:
    """A C++ loop's scalar tail computes the same nodes over the elements the vectorised body
    left; it reads the in/out buffer as it was before the body stored into it."""
    k = _kernel(shared_traces / "inputs" / "inductor_provenance_jit_log.txt", "cpp_fused_gelu_1")
    kinds = [line.kind for line in read_lines(k.source, k.language)]
    assert kinds.count("body") == 1 and kinds.count("tail") == 1
    src = k.source.split("\n")
    body = [k.line_nodes.get(str(i), ()) for i in range(10, 23)]
    tail = [k.line_nodes.get(str(i), ()) for i in range(26, 39)]
    assert "tmp6.erf()" in src[16] and "tmp6.erf()" in src[32]
    assert body == tail
    assert body[0] == ("addmm_1",) and ("erf",) in body


def test_def_use_from_the_syntax_is_the_texts(shared_traces: Path) -> None:
    """The marker's def-use chains (from the kinds: `ast` for Triton) equal those the oracle reads
    from the text (`text_flow`), on every generated kernel of two real logs and a C++ one."""
    kernels = [k for name in ("hf_llama_train", "tv_resnet_breaks") for c in bench_session(name).compiles
               for o in c.inductor for k in o.kernels if k.language == "triton"]  # fmt: skip
    kernels.append(_kernel(shared_traces / "inputs" / "inductor_provenance_jit_log.txt", "cpp_fused_gelu_1"))
    assert len(kernels) > 100
    for k in kernels:
        lines = read_lines(k.source, k.language)
        assert def_use(lines) == text_flow([line.text for line in lines]), k.name
