"""HF transformers DistilBertForSequenceClassification, 6 layers, inference with a padding mask
(random weights): a distilled BERT encoder plus a classification head."""

import sys
from pathlib import Path

import torch
from transformers import DistilBertConfig, DistilBertForSequenceClassification

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, pick

config = hf_config(DistilBertConfig, dim=pick(384, 64), hidden_dim=pick(1536, 128), n_layers=layers(6),
                   n_heads=pick(6, 4), vocab_size=pick(8192, 512), num_labels=3)


class Classify(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = hf_model(DistilBertForSequenceClassification, config)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.net(input_ids=ids, attention_mask=mask).logits


def _inputs():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, config.vocab_size, (8, 96), generator=g)
    mask = torch.ones_like(ids)
    mask[4:, 64:] = 0  # half the batch padded
    return ids, mask


model = Classify().eval().requires_grad_(False)
example_inputs = _inputs
corpus_facts = facts(model, layers=config.n_layers, hidden=config.dim, dtype="fp32", batch=8, seq=96)
