"""Forward ↔ backward partners from source lines stay linear in depth.

Text logs carry no `seq_nr`, so `backward_links._by_source_line` pairs the blocks of one source
line: forward blocks in layer order, backward blocks in reverse. When the counts do not divide
(a 24-layer BERT line whose backward splits differently), pairing must not fall back to every
block with every other: 536k partners and 1.45M link ends for one compile, a session 4.3x its log.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.analysis.backward_links import _partner_blocks
from compiler_core.session import dumps_bytes

LOG_XZ = Path(__file__).resolve().parents[3] / "bench" / "data" / "hf_bert_train.log.xz"


def test_partner_blocks_keep_the_exact_rule_and_cover_every_backward_block() -> None:
    for nf in range(1, 9):
        for r in range(1, 5):  # nb = r * nf: backward block j belongs to forward block nf-1-j//r
            for i in range(nf):
                old_rule = [j for j in range(nf * r) if nf - 1 - j // r == i]
                assert list(_partner_blocks(i, nf, nf * r)) == old_rule
    for nf in range(1, 30):
        for nb in range(nf, 75):  # every backward block to exactly one forward block, none empty
            got = [j for i in range(nf) for j in _partner_blocks(i, nf, nb)]
            assert sorted(got) == list(range(nb)) and all(_partner_blocks(i, nf, nb) for i in range(nf))
        for nb in range(1, nf):  # fewer backward blocks: each forward block still gets one
            assert all(len(_partner_blocks(i, nf, nb)) == 1 for i in range(nf))
    assert list(_partner_blocks(0, 2, 5)) == [3, 4] and list(_partner_blocks(1, 2, 5)) == [0, 1, 2]


def test_bert_partners_are_per_layer_and_the_session_stays_small(tmp_path: Path) -> None:
    if not LOG_XZ.exists():
        pytest.skip("bench data not checked out")
    log = tmp_path / "bert.log"
    log.write_bytes(lzma.decompress(LOG_XZ.read_bytes()))
    session = import_trace(log)
    (c,) = session.compiles
    assert c.aot is not None
    partners = c.aot.backward_of
    assert len(partners) >= 2300  # every float forward op still has partners
    assert max(len(p) for p in partners.values()) <= 32  # one layer's backward block(s), not 24 layers'
    assert sum(len(p) for p in partners.values()) < 60_000
    assert sum(len(t) for t in session.links.values()) < 400_000
    assert len(dumps_bytes(session)) <= 2 * log.stat().st_size
