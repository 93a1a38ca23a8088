"""One model, two torch versions and two devices: HF GPT-2 (6 layers) called at sequence lengths
32, 48 and 64 (bench/corpus/models/trouble_recompile_seq.py, run by bench/corpus/runner.py in a
fresh process under TORCH_TRACE). Before: the corpus log, torch 2.11 on an H100. After:
`data/trouble_recompile_seq_cpu_torch213.log.xz`, the same runner and model file with
`--device cpu` on torch 2.13.0+cpu (transformers 5.24), made on this machine."""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.diff import SessionDiff, diff_sessions, session_text
from tests.conftest import ROOT

DATA = Path(__file__).resolve().parent / "data"
GPU_LOG = ROOT / "bench" / "corpus" / "logs" / "trouble_recompile_seq.log.xz"
CPU_LOG = DATA / "trouble_recompile_seq_cpu_torch213.log.xz"


def _plain(xz: Path, folder: Path) -> Path:
    out = folder / xz.name.removesuffix(".xz")
    with lzma.open(xz) as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


@pytest.fixture(scope="module")
def diff(tmp_path_factory: pytest.TempPathFactory) -> SessionDiff:
    folder = tmp_path_factory.mktemp("two-versions")
    before, after = import_trace(_plain(GPU_LOG, folder)), import_trace(_plain(CPU_LOG, folder))
    assert before.meta.torch_version.startswith("2.11") and after.meta.torch_version.startswith("2.13")
    return diff_sessions(before, after)


def test_compiles_pair_across_machines_by_frame(diff: SessionDiff) -> None:
    """The files live under different folders on the two machines: frames pair by file name."""
    assert [(c.before, c.after) for c in diff.compiles] == [("0/0", "0/0"), ("0/1", "0/1")]
    assert not diff.only_before and not diff.only_after
    assert all(c.frame.startswith("_common.py:") for c in diff.compiles)
    # both versions recompiled once, for the same guard: no recompile gained or lost
    assert (diff.total("recompiles").before, diff.total("recompiles").after) == (1, 1)
    assert not diff.recompiles_removed and not diff.recompiles_added
    assert diff.compiles[1].recompile_before.endswith("expected 32, actual 48")
    assert diff.compiles[1].recompile_after.endswith("expected 32, actual 48")


def test_what_differs_is_the_attention_kernel_each_device_picks(diff: SessionDiff) -> None:
    first = diff.compiles[0]
    aot = next(g for g in first.graphs if g.stage == "aot_inference")
    assert aot.ops_removed.get("aten._scaled_dot_product_efficient_attention") == 6  # CUDA's, per layer
    assert aot.ops_added.get("aten._scaled_dot_product_flash_attention_for_cpu") == 6
    # the model's own ops are the same graph: most Dynamo nodes pair unchanged
    dynamo = next(g for g in first.graphs if g.stage == "dynamo")
    assert len(dynamo.removed) + len(dynamo.added) + len(dynamo.changed) < dynamo.nodes_before // 10
    # generated kernels are Triton before and C++ after; extern calls are named apart from them
    (kernels,) = first.kernels
    assert all(n.startswith(("triton_", "torch.ops.", "extern_kernels.")) for n in kernels.removed)
    assert all(n.startswith(("cpp_", "torch.ops.", "extern_kernels.")) for n in kernels.added)
    text = session_text(diff)
    assert "torch 2.11" in text and "torch 2.13" in text


def test_identity_guards_compare_without_addresses_and_type_reprs(diff: SessionDiff) -> None:
    """Both versions guard the builtin `int` by identity: at another address, with the type
    written `<class 'int'>` by both here, and torch.fx's module written two ways by the two."""
    first = diff.compiles[0]
    changed = first.guards_removed + first.guards_added
    assert not [g for g in changed if "G['__builtins_dict___0']['int']" in g]
    assert not [g for g in changed if g.startswith("___check_obj_id(G['__import_torch'].fx,")]
    assert first.guards.before and first.guards.after
