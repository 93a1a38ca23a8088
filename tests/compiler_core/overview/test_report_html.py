"""The shareable report: one self-contained HTML file that parses, loads nothing from elsewhere,
holds the Overview and the ranked tables, and shows hostile names as text; the CLI's exit codes."""

from __future__ import annotations

import dataclasses
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from compiler_core.cli import main
from compiler_core.overview import build_overview
from compiler_core.overview.report_html import report_html
from compiler_core.session import Ref, Session, load
from tests.compiler_core.overview.overview_logs import corpus_log, corpus_session
from tests.conftest import ROOT
from tests.security.hostile_sessions import PAYLOAD, poisoned

SCRIPT = "<script>alert('owned')</script>"
SESSION = ROOT / "resources" / "sessions" / "transformer_block.json"


class Page(HTMLParser):
    """Every start tag with its attributes, the text per element, table rows per table."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.tables: list[int] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append(0)
        elif tag == "tr" and self.tables:
            self.tables[-1] += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def _self_contained(page: Page) -> None:
    names = [t for t, _ in page.tags]
    assert not {"script", "img", "iframe", "link", "object", "embed", "base", "form"} & set(names)
    for tag, attrs in page.tags:
        for key, value in attrs.items():
            assert not key.startswith("on"), (tag, key)  # no event handlers
            if key in ("src", "href", "action"):
                assert value is not None and value.startswith("#"), (tag, key, value)
    assert names.count("style") == 1
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and csp[0]["content"] == "default-src 'none'; style-src 'unsafe-inline'"


def test_report_of_a_real_log_holds_the_overview_and_the_ranked_tables() -> None:
    session = corpus_session("trouble_hf_generate_breaks")
    overview = build_overview(session)
    page = _parse(report_html(session, overview))
    _self_contained(page)
    text = "".join(page.text)
    assert overview.verdict in text
    for section in overview.sections:
        assert section.headline in text
        assert all(f.text in text for f in section.facts)
    headings = [a.get("id") for t, a in page.tags if t == "h2" and a.get("id")]
    assert headings == [s.key for s in overview.sections]
    breaks, recompiles = overview.section("breaks"), overview.section("recompiles")
    assert breaks is not None and recompiles is not None
    kernels = sum(len(o.kernels) for c in session.compiles for o in c.inductor)
    # header row + one row each: breaks, recompiles, (no modes: a paragraph), kernels
    assert page.tables == [len(breaks.facts) + 1, len(recompiles.facts) + 1, kernels + 1]


def _with_script(session: Session) -> Session:
    """The payload of a script tag in the names a report prints: a break's reason and file, a
    kernel's name, the log's path."""
    compiles = []
    for c in session.compiles:
        breaks = tuple(dataclasses.replace(b, reason=SCRIPT + b.reason, location=dataclasses.replace(
            b.location, file=f"/x/{SCRIPT}.py") if b.location else None) for b in c.graph_breaks)
        outputs = tuple(dataclasses.replace(o, kernels=tuple(dataclasses.replace(k, name=SCRIPT + k.name)
                                                             for k in o.kernels)) for o in c.inductor)
        compiles.append(dataclasses.replace(c, graph_breaks=breaks, inductor=outputs))  # fmt: skip
    meta = dataclasses.replace(session.meta, origin_path=f"/logs/{SCRIPT}.log", device=SCRIPT)
    return dataclasses.replace(session, compiles=tuple(compiles), meta=meta)


@pytest.mark.parametrize("make", [_with_script, poisoned], ids=["script", "poisoned"])
@pytest.mark.parametrize("source", ["breaks_log", "timed_session"])
def test_hostile_names_are_text_in_the_report(make, source: str) -> None:  # type: ignore[no-untyped-def]
    session = make(corpus_session("trouble_hf_generate_breaks") if source == "breaks_log" else load(SESSION))
    html = report_html(session, build_overview(session))
    page = _parse(html)
    _self_contained(page)
    text = "".join(page.text)
    payload = SCRIPT if make is _with_script else PAYLOAD
    assert payload in text  # shown, as text
    assert payload not in html  # never as markup
    if make is _with_script and source == "breaks_log":
        assert f"{SCRIPT}Unsupported Tensor.item()" in text
        assert "script>.py:" in text  # the file's name (after the last "/", which the payload holds)


def test_cli_writes_the_report_and_says_the_verdict(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(corpus_log("trouble_recompile_seq")), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    verdict = build_overview(corpus_session("trouble_recompile_seq")).verdict
    assert said.strip() == f"wrote {out}: {verdict}"
    _self_contained(_parse(out.read_text(encoding="utf-8")))


def test_cli_writes_a_session_report_to_standard_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(SESSION), "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("<!DOCTYPE html>") and captured.out.rstrip().endswith("</html>")
    assert captured.err.startswith("wrote the report to standard output: ")


def test_cli_exit_codes_for_inputs_and_outputs_that_cannot_work(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "missing.log"), "-o", str(out)]) == 2
    assert "error: report failed loading" in capsys.readouterr().err
    not_a_log = tmp_path / "model.py"
    not_a_log.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\n")
    assert main(["report", str(not_a_log), "-o", str(out)]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["report", str(SESSION), "-o", str(tmp_path / "no" / "such" / "folder.html")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # argparse's own exit: -o is required
        main(["report", str(SESSION)])
    assert usage.value.code == 2
    assert not out.exists()


def test_a_megabyte_reason_is_clipped_and_the_overview_is_plain_json() -> None:
    session = corpus_session("trouble_hf_generate_breaks")
    c = next(c for c in session.compiles if c.graph_breaks)
    huge = dataclasses.replace(c.graph_breaks[0], hints=("x" * 3_000_000,))
    changed = dataclasses.replace(c, graph_breaks=(huge, *c.graph_breaks[1:]))
    session = dataclasses.replace(session, compiles=tuple(changed if o is c else o for o in session.compiles))
    overview = build_overview(session)
    html = report_html(session, overview)
    assert len(html) < 200_000 and "more characters)" in html
    data = json.loads(json.dumps(overview.as_dict()))  # plain values only
    assert data["verdict"] == overview.verdict
    facts = [f for s in data["sections"] for f in s["facts"]]
    assert [Ref.decode(r) for f in facts for r in f["refs"]] == [r for f in overview.facts() for r in f.refs]
