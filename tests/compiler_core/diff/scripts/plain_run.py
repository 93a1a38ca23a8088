"""Compile a model file the way a user's own script does, with nothing of CompileScope loaded:
`torch.compile(model)` called once on `example_inputs` (under TORCH_TRACE, set by the caller).
argv[1] names the model file, relative to this folder."""

import runpy
import sys
from pathlib import Path

import torch

names = runpy.run_path(str(Path(__file__).parent / sys.argv[1]))
inputs = names["example_inputs"]
torch.compile(names["model"])(*(inputs() if callable(inputs) else inputs))
