"""A comparison's re-run captures the file again as the compared session was captured: the spec
rebuilt from a real session's meta (a training capture on CPU), and a script run's."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

from compiler_core.diff.hint_rerun import spec_of
from compiler_core.run.spec import ScriptSpec
from compiler_core.session import loads

DATA = Path(__file__).resolve().parents[2] / "explorer" / "compare" / "data"


def test_a_model_file_capture_keeps_its_mode_train_choice_and_input_steps() -> None:
    session = loads(gzip.decompress((DATA / "train_budget_default.json.gz").read_bytes()))
    spec = spec_of(session)
    assert not isinstance(spec, ScriptSpec)
    assert spec.model_path == session.meta.origin_path and spec.model_path.endswith("trains.py")
    assert (spec.device, spec.mode, spec.train, spec.input_steps) == ("cpu", "default", True, 4)
    on_gpu = dataclasses.replace(session.meta, device="NVIDIA H100 80GB HBM3", mode="reduce-overhead")
    spec = spec_of(dataclasses.replace(session, meta=on_gpu))
    assert (spec.device, spec.mode) == ("cuda", "reduce-overhead")


def test_a_timed_capture_is_timed_again_with_the_same_steps_and_modes() -> None:
    from compiler_core.session import load
    from tests.conftest import ROOT

    spec = spec_of(load(ROOT / "resources" / "sessions" / "mlp_graph_break.json"))
    assert not isinstance(spec, ScriptSpec)
    assert (spec.steps, spec.modes) == (40, "default")
    untimed = spec_of(loads(gzip.decompress((DATA / "train_budget_default.json.gz").read_bytes())))
    assert untimed.steps == 0


def test_a_script_run_keeps_its_arguments_directory_and_limits() -> None:
    session = loads(gzip.decompress((DATA / "print_break.json.gz").read_bytes()))
    meta = dataclasses.replace(session.meta, origin="script", mode="per callable",
                               extra={"args": "train --lr '1e-3 x'", "cwd": "/data/run", "max_steps": "5"})
    spec = spec_of(dataclasses.replace(session, meta=meta))
    assert isinstance(spec, ScriptSpec)
    assert spec.script_args == ("train", "--lr", "1e-3 x") and spec.cwd == "/data/run"
    assert (spec.max_steps, spec.nproc, spec.device, spec.mode) == (5, 1, "cpu", None)
