"""`encode_links` stores each undirected link once, also for hubs and one-sided entries."""

from __future__ import annotations

from compiler_core.session.packed import decode_links, encode_links


def test_hub_and_one_sided_links_survive_a_round_trip() -> None:
    hub = "source|0|0|m.py:3"
    nodes = [f"dynamo|0|0|n{i}" for i in range(20)]  # more than 8: the hub's targets become a set
    links: dict[str, tuple[str, ...]] = {hub: tuple(sorted(nodes))}
    for n in nodes:
        links[n] = (hub,)
    links["zz|0|0|late"] = ("aa|0|0|early",)  # stored only under the larger ref
    links["kernel|0|0|k|with|bars"] = ("post|0|0|x",)  # keys may hold `|`; one-sided the other way
    encoded = encode_links(links)
    pairs = sum(len(keys) // 2 for _, _, keys in encoded)
    assert pairs == 20 + 2  # each hub link once, not twice
    back = decode_links(encoded)
    assert back[hub] == tuple(sorted(nodes))
    assert back["aa|0|0|early"] == ("zz|0|0|late",) and back["zz|0|0|late"] == ("aa|0|0|early",)
    assert back["post|0|0|x"] == ("kernel|0|0|k|with|bars",)


def test_a_built_link_map_encodes_as_the_checked_path_does() -> None:
    from pathlib import Path

    from compiler_core.analysis import import_trace
    from compiler_core.session import packed

    log = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "tlparse_simple.log.gz"
    session = import_trace(log)
    assert packed._BUILT and packed._BUILT[0] is session.links  # marked by the builder
    trusted = encode_links(session.links)
    packed._BUILT.clear()
    assert encode_links(session.links) == trusted and trusted
    assert decode_links(trusted) == session.links
