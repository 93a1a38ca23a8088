"""What the corpus model files share. Imports nothing of CompileScope.

- `TINY` ($CS_CORPUS_TINY=1): every file shrinks to 2 layers and a tiny width so a CPU smoke run
  finishes in seconds; the full sizes are what the GPU corpus is made with.
- `hf_config(cls, **kw)`: a transformers config built across 5.x releases: keyword arguments a
  release does not know are dropped (and listed in `dropped_config_args`), attention set to SDPA.
- `hf_model(cls, config)`: random weights from the config, never a hub download.
- training steps for causal LMs, seq2seq, classifiers and images.
- `facts(model, **more)`: what the corpus metadata records about the built model.
"""

from __future__ import annotations

import inspect
import os

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

TINY = os.environ.get("CS_CORPUS_TINY", "") == "1"
dropped_config_args: list[str] = []


def pick(full, tiny):
    """`full` normally, `tiny` in a smoke run."""
    return tiny if TINY else full


def layers(n: int) -> int:
    return 2 if TINY else n


def hf_config(cls, **kw):
    """`cls(**kw)` where every argument this transformers release refuses is dropped; SDPA attention."""
    kw.setdefault("attn_implementation", "sdpa")
    for _ in range(len(kw) + 1):
        try:
            config = cls(**kw)
            break
        except TypeError as exc:  # a strict 5.x config refusing an argument it does not know
            bad = next((k for k in kw if f"'{k}'" in str(exc)), None)
            if bad is None:
                raise
            dropped_config_args.append(bad)
            kw.pop(bad)
    else:
        raise RuntimeError(f"cannot build {cls.__name__}")
    for name, value in kw.items():  # some releases keep unknown kwargs silently: make sure they hold
        if name != "attn_implementation" and getattr(config, name, value) != value:
            try:
                setattr(config, name, value)
            except Exception:
                dropped_config_args.append(name)
    try:
        if getattr(config, "_attn_implementation", None) is None:
            config._attn_implementation = "sdpa"
    except Exception:
        pass
    return config


def hf_model(cls, config):
    """Random weights from the config (no download). `_from_config` honours attn_implementation
    on releases where the constructor alone does not."""
    torch.manual_seed(0)
    maker = getattr(cls, "_from_config", None)
    if maker is not None:
        try:
            return maker(config)
        except Exception:
            pass
    return cls(config)


def _loss_of(out):
    loss = getattr(out, "loss", None)
    if loss is None and isinstance(out, dict):
        loss = out.get("loss")
    if loss is None and isinstance(out, (tuple, list)):
        loss = out[0]
    return loss


def lm_train_step(model, inputs):
    """Next-token loss on the input ids, then backward (HF shifts the labels itself)."""
    (ids,) = inputs
    loss = _loss_of(model(input_ids=ids, labels=ids))
    loss.backward()
    return loss


def seq2seq_train_step(model, inputs):
    src, tgt = inputs
    loss = _loss_of(model(input_ids=src, labels=tgt))
    loss.backward()
    return loss


def mlm_train_step(model, inputs):
    """Masked-LM style: the labels are the input ids themselves (random weights, shape is what counts)."""
    (ids,) = inputs
    loss = _loss_of(model(input_ids=ids, labels=ids))
    loss.backward()
    return loss


def image_train_step(model, inputs):
    """Cross-entropy against fixed class ids, then backward (logits upcast for bf16 models)."""
    (x,) = inputs
    logits = model(x)
    if isinstance(logits, (tuple, list)):
        logits = logits[0]
    target = torch.arange(logits.shape[0], device=logits.device) % logits.shape[-1]
    loss = torch.nn.functional.cross_entropy(logits.float(), target)
    loss.backward()
    return loss


def sum_train_step(model, inputs):
    out = model(*inputs)
    if isinstance(out, (tuple, list)):
        out = out[0]
    loss = out.float().pow(2).mean()
    loss.backward()
    return loss


class Logits(torch.nn.Module):
    """A causal LM's next-token logits only (use_cache=False), as a serving loop takes them."""

    def __init__(self, lm: torch.nn.Module) -> None:
        super().__init__()
        self.lm = lm

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=ids, use_cache=False).logits


def facts(model, **more):
    """Metadata the corpus records about the built model (read by the corpus runner)."""
    params = sum(p.numel() for p in model.parameters()) if isinstance(model, torch.nn.Module) else 0
    out = {"params": params, "tiny": TINY, **more}
    config = None
    if isinstance(model, torch.nn.Module):
        config = next((m.config for m in model.modules() if hasattr(m, "config")), None)
    if config is not None:
        out["config_class"] = type(config).__name__
        keys = ["_attn_implementation"]
        if any(hasattr(config, k) for k in ("num_local_experts", "num_experts")):
            keys.append("_experts_implementation")
        for key in keys:
            try:
                value = getattr(config, key)
            except Exception:
                continue
            if value is not None:
                out[key.lstrip("_")] = str(value)
    if dropped_config_args:
        out["dropped_config_args"] = sorted(set(dropped_config_args))
    return out


def signature_has(fn, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
