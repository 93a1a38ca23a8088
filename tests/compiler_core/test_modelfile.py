"""Model-file validation: each way a file can be wrong gets a message naming the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.modelfile import (
    MINIMAL_MODEL_FILE,
    ModelFileError,
    UnsupportedDeviceError,
    load_model_file,
)
from tests.conftest import EXAMPLES


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.py"
    path.write_text(text)
    return path


def test_minimal_file_is_valid(tmp_path: Path) -> None:
    spec = load_model_file(_write(tmp_path, MINIMAL_MODEL_FILE))
    assert spec.trains
    assert len(spec.example_inputs()) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1\n", "missing required name(s): model, example_inputs"),
        ("import torch\nmodel = torch.nn.ReLU()\n", "missing required name(s): example_inputs"),
        ("example_inputs = ()\n", "missing required name(s): model"),
        ("model = 3\nexample_inputs = ()\n", "`model` must be an nn.Module or a function, got int"),
        ("model = abs\nexample_inputs = 5\n", "`example_inputs` must be a tuple or a function"),
        ("model = abs\nexample_inputs = ()\ntrain_step = 1\n", "`train_step` must be a function"),
        ("model = abs\nexample_inputs = ()\ncompile_options = [1]\n", "`compile_options` must be a dict"),
    ],
)
def test_invalid_files_name_the_problem_and_show_a_valid_file(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ModelFileError) as info:
        load_model_file(_write(tmp_path, text))
    assert message in str(info.value)
    assert "A minimal valid model file" in str(info.value)
    assert "Traceback" not in str(info.value)


def test_example_inputs_function_must_return_a_tuple(tmp_path: Path) -> None:
    spec = load_model_file(_write(tmp_path, "model = abs\ndef example_inputs():\n    return 3\n"))
    with pytest.raises(ModelFileError, match="must return a tuple, got int"):
        spec.example_inputs()


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="no such file"):
        load_model_file(tmp_path / "nope.py")


def test_gpu_only_example_is_refused_clearly_on_cpu() -> None:
    with pytest.raises(UnsupportedDeviceError, match="needs device 'cuda'"):
        load_model_file(EXAMPLES / "triton_add_relu.py", device="cpu")


@pytest.mark.parametrize("name", ["mlp_graph_break", "transformer_block", "small_cnn", "dynamic_shapes"])
def test_bundled_cpu_examples_are_valid_and_documented(name: str) -> None:
    spec = load_model_file(EXAMPLES / f"{name}.py")
    assert spec.doc, "each example says what it demonstrates"
    out = spec.model(*spec.example_inputs())
    assert out is not None
