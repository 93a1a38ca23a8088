"""Multi-rank (g): HF transformers Qwen2ForCausalLM (12 layers) training under FSDP on 2 ranks
(torchrun, NCCL; gloo on CPU): FSDP2 `fully_shard` on each decoder layer then the root (FSDP1
when this torch has no FSDP2), then `torch.compile` of the sharded model. One TORCH_TRACE log per
rank. As a CompileScope model file (one process) it is the plain model, no FSDP."""

import sys
from pathlib import Path

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from _common import facts, hf_config, hf_model, layers, lm_train_step, pick

config = hf_config(Qwen2Config, hidden_size=pick(512, 64), intermediate_size=pick(1408, 128),
                   num_hidden_layers=layers(12), num_attention_heads=pick(8, 4), num_key_value_heads=2,
                   vocab_size=pick(8192, 512), max_position_embeddings=512)
model = hf_model(Qwen2ForCausalLM, config).train()
example_inputs = (torch.randint(0, config.vocab_size, (pick(4, 2), pick(128, 32))),)
train_step = lm_train_step


def fsdp_blocks(model):
    """The modules the runner shards one by one before the root (decoder layers)."""
    return list(model.model.layers)


corpus_facts = facts(model, layers=config.num_hidden_layers, hidden=config.hidden_size, dtype="fp32",
                     batch_per_rank=example_inputs[0].shape[0], seq=example_inputs[0].shape[1],
                     wrapper="FSDP")
