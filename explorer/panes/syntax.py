"""Pygments-driven highlighting for QTextDocuments (Python sources, Triton and C++ kernels).

The whole text is lexed once, up front, into per-line spans; `highlightBlock` then only looks
spans up. Lexing per block would break multi-line strings and costs a lexer call per line.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cache

from pygments.lexer import Lexer
from pygments.lexers import CppLexer, PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, String, Token, _TokenType
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

_STYLE: list[tuple[_TokenType, str, bool]] = [
    (Comment, "#6a737d", False),
    (String, "#0a7d32", False),
    (Number, "#b05a00", False),
    (Keyword, "#a626a4", True),
    (Name.Builtin, "#0b61a4", False),
    (Name.Function, "#4078f2", False),
    (Name.Class, "#c18401", True),
    (Name.Decorator, "#986801", False),
    (Operator.Word, "#a626a4", True),
]

Span = tuple[int, int, int]  # start column, length, index into _STYLE


@cache
def _style(token: _TokenType) -> int | None:
    for i, (ttype, _color, _bold) in enumerate(_STYLE):
        if token in ttype:
            return i
    return None


@cache
def _format(style: int) -> QTextCharFormat:
    _ttype, color, bold = _STYLE[style]
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


def _lexer_class(language: str) -> type[Lexer]:
    """Triton kernels are Python; extern calls and C++ kernels use the C++ lexer."""
    return CppLexer if language in ("cpp", "c++", "c") else PythonLexer


_made: set[type[Lexer]] = set()


def lexer_for(language: str) -> Lexer:
    cls = _lexer_class(language)
    lexer = cls(stripnl=False, ensurenl=False)
    _made.add(cls)
    return lexer


def lexer_ready(language: str) -> bool:
    """Whether this language's lexer was made once in this process: Pygments compiles a lexer
    class's regex tables on its first instance (~100 ms for Python), so until then even a
    short text is no quick lex on the GUI thread."""
    return _lexer_class(language) in _made


_CACHE_SIZE = 16
_cache: OrderedDict[tuple[str, str], list[list[Span]]] = OrderedDict()


def cached_spans(text: str, language: str) -> list[list[Span]] | None:
    """`line_spans`' result when it is cached, else None (no lexing)."""
    spans = _cache.get((text, language))
    if spans is not None:
        _cache.move_to_end((text, language))
    return spans


def line_spans(text: str, language: str) -> list[list[Span]]:
    """Per line: (start column, length, style) for every token that has a style.

    Cached (callers do not mutate the result): panes set the same file again on every compile
    switch and session refresh, and lexing a long library file is slow. The lexing
    (`lex`) is Qt-free, so a view lexes a long text on a worker thread and stores it here
    (`remember`) on the GUI thread."""
    spans = cached_spans(text, language)
    if spans is None:
        spans = lex(text, language)
        remember(text, language, spans)
    return spans


def remember(text: str, language: str, spans: list[list[Span]]) -> None:
    _cache[(text, language)] = spans
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)


def lex(text: str, language: str) -> list[list[Span]]:
    """`line_spans` without the cache (safe on any thread)."""
    lines: list[list[Span]] = [[]]
    col = 0
    for token, value in lexer_for(language).get_tokens(text):
        fmt = _style(token) if token is not Token.Text else None
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
                col = 0
            if part and fmt is not None:
                lines[-1].append((col, len(part), fmt))
            col += len(part)
    return lines


def _note_format() -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor("#b3261e"))
    fmt.setFontItalic(True)
    fmt.setBackground(QColor(255, 235, 232))
    return fmt


class PygmentsHighlighter(QSyntaxHighlighter):
    """`notes_from[block]` is the column where an inline annotation starts in that block (the
    code view appends annotations after the code, behind line separators): it gets one style."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._spans: list[list[Span]] = []
        self.notes_from: dict[int, int] = {}
        self._note = _note_format()

    def set_source(self, text: str, language: str, notes_from: dict[int, int] | None = None,
                   spans: list[list[Span]] | None = None, rehighlight: bool = True) -> None:  # fmt: skip
        """`spans`: the text's `line_spans` when the caller has them (lexed on a worker); an
        empty list shows the text plain until `set_spans`. `rehighlight=False` when the text
        is set into the document next: Qt highlights every changed block then anyway, and a
        second pass would highlight the whole text twice."""
        self._spans = spans if spans is not None else line_spans(text, language) if text else []
        self.notes_from = dict(notes_from or {})
        if rehighlight:
            self.rehighlight()

    def set_spans(self, spans: list[list[Span]], rehighlight: bool = True) -> None:
        """`rehighlight=False`: the caller colours the blocks itself (`rehighlightBlock`)."""
        self._spans = spans
        if rehighlight:
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        number = self.currentBlock().blockNumber()
        if number < len(self._spans):
            for start, length, style in self._spans[number]:
                self.setFormat(start, length, _format(style))
        note_start = self.notes_from.get(number)
        if note_start is not None:
            self.setFormat(note_start, len(text) - note_start, self._note)
