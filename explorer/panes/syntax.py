"""Pygments-driven highlighting for QTextDocuments (Python sources, Triton and C++ kernels).

The whole text is lexed once, up front, into per-line spans; `highlightBlock` then only looks
spans up. Lexing per block would break multi-line strings and costs a lexer call per line.
"""

from __future__ import annotations

from functools import cache, lru_cache

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

Span = tuple[int, int, QTextCharFormat]


@cache
def _format(token: _TokenType) -> QTextCharFormat | None:
    for ttype, color, bold in _STYLE:
        if token in ttype:
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(color))
            if bold:
                fmt.setFontWeight(QFont.Weight.Bold)
            return fmt
    return None


def lexer_for(language: str) -> Lexer:
    """Triton kernels are Python; extern calls and C++ kernels use the C++ lexer."""
    if language in ("cpp", "c++", "c"):
        return CppLexer(stripnl=False, ensurenl=False)
    return PythonLexer(stripnl=False, ensurenl=False)


@lru_cache(maxsize=16)
def line_spans(text: str, language: str) -> list[list[Span]]:
    """Per line: (start column, length, format) for every token that has a style.

    Cached (callers do not mutate the result): panes set the same file again on every compile
    switch and session refresh, and lexing a 2,000-line library file costs ~100 ms."""
    lines: list[list[Span]] = [[]]
    col = 0
    for token, value in lexer_for(language).get_tokens(text):
        fmt = _format(token) if token is not Token.Text else None
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

    def set_source(self, text: str, language: str, notes_from: dict[int, int] | None = None) -> None:
        self._spans = line_spans(text, language) if text else []
        self.notes_from = dict(notes_from or {})
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        number = self.currentBlock().blockNumber()
        if number < len(self._spans):
            for start, length, fmt in self._spans[number]:
                self.setFormat(start, length, fmt)
        note_start = self.notes_from.get(number)
        if note_start is not None:
            self.setFormat(note_start, len(text) - note_start, self._note)
