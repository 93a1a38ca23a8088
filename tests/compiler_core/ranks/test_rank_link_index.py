"""The link index of a multi-rank import: its fast build (every target is a key) relates exactly
what the build for any link map (one-sided links allowed) relates.

The logs are a real two-rank gloo job whose ranks diverge (tests/data/ranks/diverge).
"""

from __future__ import annotations

from compiler_core.analysis import import_trace
from compiler_core.session.links import LinkIndex, decode_or_none
from tests.compiler_core.ranks.rank_data import logs_of


def test_fast_and_general_index_builds_relate_the_same_refs() -> None:
    session = import_trace(logs_of("diverge"))
    assert session.meta.ranks == (0, 1)
    fast = LinkIndex(session.links).prepare()
    one_sided = dict(session.links)
    first = next(iter(one_sided))
    extra = "source_line|9|0/0|elsewhere.py:1"  # a target that is no key: the general build
    one_sided[first] = (*one_sided[first], extra)
    general = LinkIndex(one_sided).prepare()
    refs = [r for k in session.links if (r := decode_or_none(k)) is not None]
    assert {r.rank for r in refs} == {0, 1}
    beyond = {decode_or_none(extra)}  # reached through `first` only, and leads nowhere
    for ref in refs:
        assert fast.direct(ref) == general.direct(ref) - beyond
        assert fast.related(ref) == general.related(ref) - beyond
