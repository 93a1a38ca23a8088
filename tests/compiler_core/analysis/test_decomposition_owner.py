"""ResNet's `x = self.bn1(x)` line holds two Dynamo ops: `add_` (num_batches_tracked += 1, a
buffer only) and `batch_norm`. A log without provenance links the line's AOT ops to both; the
batch norm's var_mean/rsqrt/sub read the activation, not that buffer, so they are the
batch_norm's (the Decompositions pane listed them under `add_`)."""

from __future__ import annotations

from tests.bench_logs import bench_session


def test_batch_norm_ops_are_not_given_to_the_buffer_increment_on_its_line() -> None:
    c = bench_session("tv_resnet_breaks").compiles[0]
    assert c.decomposition is not None
    rows = {r.dynamo_node: r for r in c.decomposition.rows}
    assert {"aten.var_mean", "aten.rsqrt"} <= set(rows["x_1"].forward_ops)  # the batch_norm
    assert "aten.var_mean" not in rows["add_"].forward_ops
    assert "aten.add" in rows["add_"].forward_ops  # num_batches_tracked + 1 stays the increment's
