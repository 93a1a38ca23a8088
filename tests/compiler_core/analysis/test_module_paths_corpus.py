"""Module paths and folds on real corpus logs (bench/corpus: torchvision and a diffusion U-Net,
written by plain torch on a GPU): where a node without parameters is drawn, and which blocks
fold, each checked against what the model's own code says."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.session.model import Graph
from explorer.layout import build_groups, from_graph

LOGS = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs"


def _dynamo(name: str) -> Graph:
    session = import_trace(LOGS / f"{name}.log.xz")
    graphs = [c.dynamo_graph for c in session.compiles if c.dynamo_graph is not None]
    return max(graphs, key=lambda g: len(g.nodes))


def _folds(g: Graph) -> dict[str, list[str]]:
    tree = build_groups(from_graph(g))
    return {tree.label[f]: [tree.path[c].strip("/") for c in tree.children[f]] for f in tree.fold}


def test_efficientnet_stochastic_depth_stays_in_its_block_and_only_equal_blocks_fold() -> None:
    g = _dynamo("tv_efficientnet_b0_train")
    by_name = {n.name: n for n in g.nodes}
    # MBConv.forward: `result = self.stochastic_depth(result); result += input` closes block 1 of
    # stage 2; torchvision's stochastic_depth draws its noise with `torch.empty(...).bernoulli_()`
    for name in ("noise", "noise_1", "div_", "result", "result_1"):
        assert by_name[name].module_path == "features/2/1", (name, by_name[name].module_path)
    folds = _folds(g)
    # stage 6's blocks 1-3 are one block three times (192 channels, 5x5); stages 2 and 3 run the
    # same ops on 24 and 40 channels with 3x3 and 5x5 kernels: not one block twice
    assert ["features/6/1", "features/6/2", "features/6/3"] in folds.values()
    assert not any("features/2" in kids and "features/3" in kids for kids in folds.values())


def test_unet_skip_add_stays_in_its_block_where_the_skip_is_identity() -> None:
    g = _dynamo("unet_diffusion_train")
    # `return h + self.skip(x)`: a conv (with parameters) only in blocks that change channels
    adds = [n for n in g.nodes if n.source is not None and "h + self.skip(x)" in n.source.code]
    first = adds[0]
    assert first.module_path == "down/0/0", first.module_path
    assert ["down/0/0", "down/0/1"] in _folds(g).values()


def test_convnext_avgpool_is_not_drawn_inside_the_last_block() -> None:
    g = _dynamo("tv_convnext_t_infer")
    pool = next(n for n in g.nodes if n.target.endswith("adaptive_avg_pool2d"))
    assert not pool.module_path.startswith("features/7"), pool.module_path
    assert any(kids[:2] == ["features/7/0", "features/7/1"] for kids in _folds(g).values())


@pytest.mark.parametrize("name", ["hf_gemma_infer", "hf_mixtral_infer", "timm_deit_small_train"])
def test_decoder_and_vit_layers_still_fold_whole(name: str) -> None:
    g = _dynamo(name)
    folds = _folds(g)
    assert any(len(kids) >= 2 for kids in folds.values()), folds
