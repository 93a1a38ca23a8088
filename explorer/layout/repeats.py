"""Fold repeated structure: N identical numbered sibling modules become one block.

A 32-layer transformer is 32 copies of one layer; drawn as 32 boxes (or 9k nodes) it is a wall.
Here, runs of at least two consecutive sibling groups numbered `0`, `1`, ... (the label's trailing
number: `0` in HF's `layers.0`, `encoder_layer_0` in torchvision's ViT; siblings of one run share
what comes before it) whose subtrees are structurally identical are moved under one new *fold*
group labelled `layers.0–31 × 32` or `encoder_layer_0–11 × 12`. The fold
collapsed is one box; expanded it is the list of the layers (each still collapsed), any one of
which expands as usual. ResNet's `layer1` folds its blocks `1–2` (block 0 has the downsample).

Structural signature of a group: its member nodes' ops in order (targets with FX names, digits
and operands stripped, so `hidden_states_5 + down_proj` and `inputs_embeds + attn_output_3` are
both `+`) with the dtypes and shapes they produce, and its children's labels (digits stripped)
with their signatures, hashed bottom-up.
Qt-free; the folded tree keeps `GroupTree`'s invariant that parents have smaller ids.
"""

from __future__ import annotations

import re

import numpy as np

from explorer.layout.graph_arrays import GraphArrays
from explorer.layout.module_groups import ROOT, GroupTree

_PLAIN_TARGET = re.compile(r"[\w.]+")
_DIGITS = re.compile(r"\d+")
FOLD_MIN = 2
_CALL_SUFFIX = re.compile(r" \(\d+\)$")
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def numbered(label: str) -> tuple[str, int] | None:
    """(`encoder_layer_`, 3) for `encoder_layer_3`, ("", 3) for `3`; None without a trailing number
    set off by a separator: `fc1` and `fc2` (an MLP's two projections) or `conv1` are names, not
    copies, and a call suffix `h (2)` is not one either."""
    m = _NUMBERED.match(label)
    if m is None or _CALL_SUFFIX.search(label):
        return None
    prefix = m.group(1)
    if prefix and prefix[-1].isalnum():
        return None
    return prefix, int(m.group(2))


def op_token(op: str, target: str) -> str:
    """A node's op with everything that differs between copies of one layer removed."""
    if _PLAIN_TARGET.fullmatch(target or ""):
        return f"{op}:{_DIGITS.sub('', target)}" if op != "call_method" else f"m:{target}"
    return f"{op}:{_PLAIN_TARGET.sub('', target)}"  # `a + b` -> "+", `x[` -> "["


def signatures(tree: GroupTree, arrays: GraphArrays) -> list[int]:
    """Structural hash per group (children have larger ids, so a reverse sweep is bottom-up).
    Each op counts with the dtypes and shapes it produces: EfficientNet's stages 2 and 3 run the
    same ops on 24 and 40 channels with 3x3 and 5x5 kernels, and `× 2` would say they are one
    block twice; a decoder's layers match shape for shape (symbolic sizes included)."""
    tokens = [(op_token(n.op, n.target), tuple((o.dtype, o.shape) for o in n.outputs)) for n in arrays.nodes]
    sig = [0] * tree.count
    for g in range(tree.count - 1, -1, -1):
        members = tuple(tokens[i] for i in tree.members[g])
        kids = tuple((_DIGITS.sub("#", tree.label[c]), sig[c]) for c in tree.children[g])
        sig[g] = hash((members, kids))
    return sig


def _runs(tree: GroupTree, g: int, sig: list[int]) -> list[list[int]]:
    """Maximal runs of consecutive numbered children of `g` with one signature."""
    out: list[list[int]] = []
    run: list[int] = []
    step = 0
    for c in tree.children[g]:
        num = None if tree.is_section[c] else numbered(tree.label[c])
        last = numbered(tree.label[run[-1]]) if run else None
        if num is not None and last is not None and num[0] == last[0] and sig[c] == sig[run[-1]]:
            d = num[1] - last[1]
            if d in (1, -1) and step in (0, d):  # backward graphs run the layers in reverse
                run.append(c)
                step = d
                continue
        step = 0
        if len(run) >= FOLD_MIN:
            out.append(run)
        run = [c] if num is not None else []
    if len(run) >= FOLD_MIN:
        out.append(run)
    return out


def fold_repeats(tree: GroupTree, arrays: GraphArrays) -> GroupTree:
    """A new tree with fold groups inserted (`tree` itself if nothing repeats)."""
    sig = signatures(tree, arrays)
    runs = {g: _runs(tree, g, sig) for g in range(tree.count)}
    if not any(runs.values()):
        return tree
    folder = _Folder(tree, runs)
    folder.walk(ROOT)
    out, new_id = folder.out, folder.new_id
    members: list[list[int]] = [[] for _ in range(out.count)]
    for g in range(tree.count):
        members[new_id[g]] = list(tree.members[g])
    out.members = members
    out.node_group = np.asarray([new_id[int(g)] for g in tree.node_group.tolist()], dtype=np.int64)
    size = [len(m) for m in out.members]
    for g in range(out.count - 1, 0, -1):
        size[out.parent[g]] += size[g]
    out.size = size
    out.order_rank = tree.order_rank
    return out


class _Folder:
    """The folded copy of a tree, made by a walk in the source tree's order (so parents keep
    smaller ids). Methods, not nested functions: two closures calling each other are a
    reference cycle, which would leave the whole source tree (its per-group lists) to the
    collector instead of to refcounting."""

    def __init__(self, tree: GroupTree, runs: dict[int, list[list[int]]]) -> None:
        self.tree, self.runs = tree, runs
        self.out = GroupTree()
        self.out.is_section[ROOT] = tree.is_section[ROOT]
        self.new_id = {ROOT: ROOT}

    def copy(self, g: int, parent: int) -> None:
        tree = self.tree
        self.new_id[g] = self.out.add(parent, tree.label[g], tree.path[g], tree.is_section[g])
        self.walk(g)

    def walk(self, g: int) -> None:
        tree, out, new_id = self.tree, self.out, self.new_id
        first_of = {run[0]: run for run in self.runs[g]}
        in_run = {c for run in self.runs[g] for c in run}
        for c in tree.children[g]:
            if c in first_of:
                run = first_of[c]
                ends = [numbered(tree.label[r]) for r in (run[0], run[-1])]
                prefix = ends[0][0] if ends[0] else ""
                a, b = sorted(n[1] for n in ends if n is not None)
                name = tree.label[g] if g != ROOT and not tree.is_section[g] else ""
                name = _CALL_SUFFIX.sub("", name)  # `h (2)`: the second call of `h` still holds `h.3`
                if prefix:  # `encoder_layer_0–11 × 12`: the siblings' own name says what they are
                    label = f"{prefix}{a}–{b} × {len(run)}"
                else:
                    label = f"{name}.{a}–{b} × {len(run)}" if name else f"{a}–{b} × {len(run)}"
                f = out.add(new_id[g], label, f"{tree.path[g]}/{prefix}{a}–{b}")
                out.fold.append(f)
                for r in run:
                    self.copy(r, f)
            elif c not in in_run:
                self.copy(c, new_id[g])
