"""`storage_bytes`: the one saved-bytes total that the session summary, the budget sweep and the
AOT pane all show; views of one storage count once, at their largest."""

from __future__ import annotations

from compiler_core.analysis.saved_tensors import storage_bytes
from compiler_core.queries.summary import aot_saved_bytes
from compiler_core.session.model import AotInfo, SavedTensor


def test_views_of_one_storage_count_once_at_their_largest() -> None:
    saved = (
        SavedTensor("q", bytes=100, storage_key="qkv"),
        SavedTensor("k", bytes=300, storage_key="qkv"),
        SavedTensor("v", bytes=200, storage_key="qkv"),
        SavedTensor("x", bytes=50),  # no storage key: its own storage
        SavedTensor("y", bytes=70, storage_key="y"),
    )
    assert storage_bytes(saved) == 300 + 50 + 70
    assert storage_bytes(iter(saved)) == 420  # any iterable, read once
    assert storage_bytes(()) == 0
    assert aot_saved_bytes(AotInfo(saved_tensors=saved)) == 420
    assert aot_saved_bytes(None) == 0
