"""A CPU capture of a real HF model stores the library source its graphs and its break came from.

Tiny GPT-2 (1 layer, 32 wide): its loss path calls transformers' `logger.warning_once`, which
Dynamo cannot trace, so the break is in library code, not in the model file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec

pytest.importorskip("transformers")
pytestmark = pytest.mark.slow

MODEL = '''
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=1, n_head=2, vocab_size=64, n_positions=16))
example_inputs = (torch.randint(0, 64, (2, 8)),)


def train_step(model, inputs):
    (ids,) = inputs
    return model(input_ids=ids, labels=ids).loss
'''


@pytest.mark.timeout(900)
def test_capture_stores_transformers_sources_and_break(tmp_path: Path) -> None:
    import transformers

    model = tmp_path / "tiny_gpt2.py"
    model.write_text(MODEL)
    spec = CaptureSpec(model_path=str(model), out_path=str(tmp_path / "out.json"))
    client = WorkerClient(spec, timeout_s=800, cache_dir=tmp_path / "cache")
    assert client.run().ok, (client.error, client.stderr_tail[-3000:])
    session = client.recover_session()
    assert session is not None

    rows = distinct_breaks(session)
    assert rows and rows[0].gb_code == "GB0291"
    loc = rows[0].location
    assert loc is not None and loc.file.endswith("transformers/modeling_utils.py")
    package = Path(transformers.__file__).parent
    # the library files are stored verbatim (they exist here), the break's line among them
    utils = session.sources[loc.file]
    assert utils == (package / "modeling_utils.py").read_text()
    assert utils.splitlines()[loc.line - 1].strip() == "logger.warning_once("
    gpt2 = str(package / "models" / "gpt2" / "modeling_gpt2.py")
    assert gpt2 in session.sources and not session.source_notes.get(gpt2)
    assert str(model) in session.sources
    assert not any("compiler_core" in p for p in session.sources)
    # the capture's profiled step measured what the break leaves to eager
    assert rows[0].measured_ms is not None and rows[0].measured_ms > 0
