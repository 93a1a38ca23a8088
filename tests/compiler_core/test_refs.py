"""Typed refs: built by constructors, read by fields, stored in the old string form.

Names hold ':' for real: extern kernels are named `extern_kernels.mm:3` or
`torch.ops.aten.mm.default:3`, and a path can be `C:\\x.py`. The storage form must give every one
of them back unchanged, and a session written before refs were typed must still decode.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler_core.session import LinkIndex, Ref, RefKind, load
from compiler_core.session.links import decode_or_none
from compiler_core.session.vocab import Partition
from tests.conftest import FIXTURES

COLON_NAMES = ["extern_kernels.mm:3", "torch.ops.aten.mm.default:3", "a:b:c:", ":", "x|y:1", "", "::7"]


def _every_kind(name: str, line: int, rank: int | None) -> list[Ref]:
    return [
        Ref.source_line(name or "f.py", line, rank),
        Ref.dynamo_node("0/1", name, rank),
        Ref.aot_node("0/1", "joint", name, rank),
        Ref.post_grad_node("0/1", "backward", name, rank),
        Ref.kernel("0/1", "forward", name, rank),
        Ref.kernel_line("0/1", "inference", name, line, rank),
        Ref.saved_tensor("0/1", name, rank),
        Ref.guard("0/1", line, rank),
        Ref.graph_break("0/1", line, rank),
        Ref.compile("0/1", rank),
    ]


@pytest.mark.parametrize("name", COLON_NAMES)
def test_names_with_colons_round_trip_for_every_kind(name: str) -> None:
    for ref in _every_kind(name, 12, 3):
        assert Ref.decode(ref.encode()) == ref, ref


@given(
    name=st.text(),
    line=st.integers(min_value=0, max_value=10**9),
    rank=st.none() | st.integers(min_value=0, max_value=4096),
    compile_id=st.text(alphabet=st.characters(blacklist_characters="|")),
)
def test_any_name_round_trips(name: str, line: int, rank: int | None, compile_id: str) -> None:
    for ref in _every_kind(name, line, rank):
        ref = dataclasses.replace(ref, compile_id="" if ref.kind is RefKind.SOURCE_LINE else compile_id)
        back = Ref.decode(ref.encode())
        assert back == ref and hash(back) == hash(ref)


def test_fields_are_typed() -> None:
    k = Ref.kernel_line("0/0", "forward", "extern_kernels.mm:3", 7, 1)
    assert k.graph is Partition.FORWARD and k.name == "extern_kernels.mm:3" and k.line == 7
    assert k.kernel_of_line() == Ref.kernel("0/0", "forward", "extern_kernels.mm:3", 1)
    src = Ref.source_line("C:\\work\\m.py", 4)
    assert (src.path, src.line) == ("C:\\work\\m.py", 4)
    assert Ref.guard("0/0", 2).index == 2 and Ref.graph_break("0/0", 5).index == 5
    with pytest.raises(ValueError, match="names no partition"):
        Ref.kernel("0/0", "forward:x", "k")
    with pytest.raises(TypeError):
        Ref(RefKind.KERNEL, "0/0", "forward:k", 1)  # type: ignore[misc]  # the old positional key


def test_the_storage_form_is_the_one_sessions_always_had() -> None:
    """Byte-for-byte the strings older builds wrote (so no schema bump, and old files load)."""
    assert Ref.kernel("0/0", "forward", "extern_kernels.mm:3", 1).encode() == \
        "kernel|1|0/0|forward:extern_kernels.mm:3"
    assert Ref.kernel_line("0/0", "backward", "k:0", 9).encode() == "kernel_line||0/0|backward:k:0:9"
    assert Ref.source_line("/a:b/m.py", 3).encode() == "source_line|||/a:b/m.py:3"
    assert Ref.aot_node("2/0", "joint", "mm").encode() == "aot_node||2/0|joint:mm"
    assert Ref.guard("0/0", 4).encode() == "guard||0/0|4"
    assert Ref.compile("0/0").encode() == "compile||0/0|"
    # and the old strings decode to typed fields, the colon inside the name kept
    old = Ref.decode("kernel_line||0/0|forward:torch.ops.aten.mm.default:3:12")
    assert (old.graph, old.name, old.line) == ("forward", "torch.ops.aten.mm.default:3", 12)


@pytest.mark.parametrize("text", [
    "kernel|0/0|x|y",  # rank is no int
    "kernel||0/0|y",  # no graph
    "kernel||0/0|sideways:y",  # a graph that is no partition
    "kernel_line||0/0|forward:k",  # no line
    "kernel_line||0/0|forward:k:x",
    "source_line|||f.py",
    "guard||0/0|first",
    "nonsense||0/0|x",
    "too|few",
])
def test_text_that_is_no_ref_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Ref.decode(text)
    assert decode_or_none(text) is None


def test_an_old_session_file_decodes_into_typed_refs() -> None:
    """A fixture written before refs were typed: every stored link decodes, and the extern
    kernels (names with ':') link to their post-grad nodes through the typed fields."""
    session = load(FIXTURES / "transformer_block.json")
    names = {n for k, vs in session.links.items() for n in (k, *vs)}
    assert all(decode_or_none(n) is not None for n in names)
    index = LinkIndex(session.links)
    externs = [(c, o, k) for c in session.compiles for o in c.inductor for k in o.kernels
               if ":" in k.name]  # fmt: skip
    assert externs
    for c, o, k in externs:
        nodes = {r.name for r in index.direct(Ref.kernel(c.compile_id, o.graph, k.name, c.rank))
                 if r.kind is RefKind.POST_GRAD_NODE}  # fmt: skip
        assert set(k.fused_nodes) <= nodes, k.name
