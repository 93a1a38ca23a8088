"""What the HF bench model files share: layer count from $CS_LAYERS (CPU tests use 2), and the
language-model training step (next-token loss on the input ids, then backward)."""

import os

LAYERS = int(os.environ.get("CS_LAYERS", "0") or 0)


def layers(default: int) -> int:
    return LAYERS or default


def lm_train_step(model, inputs):
    (ids,) = inputs
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return loss
