"""EBNF / GBNF front-end: llama.cpp's GBNF grammar format into the grammar IR.

Syntax (a superset of llama.cpp GBNF)::

    root   ::= greeting (" " name)+ "!" <|eot_id|>   # comments run to the end of the line
    greeting ::= "hello" | "hi"
    name   ::= [A-Z] [a-z]{1,15} | /[0-9]+/          # /.../ is a regex terminal (full match)

- A rule is ``name ::= alternatives``; names use letters, digits, ``-`` and ``_``. A rule
  ends where the next ``name ::=`` starts, so bodies may span lines freely (llama.cpp
  only allows line breaks inside parentheses or after ``|``; every grammar it accepts
  means the same here).
- Terminals: ``"..."`` strings, ``[...]`` / ``[^...]`` classes, ``.`` (any character,
  newline included), ``/regex/`` with optional flags ``i`` and ``s`` (see
  :mod:`.regex`), special tokens ``<[128009]>`` by id or ``<|eot_id|>`` by text (looked up
  with ``special_tokens``). Escapes in strings and classes: ``\\n \\t \\r \\\\ \\" \\[ \\]
  \\- \\^ \\/ \\' \\xNN \\uNNNN \\UNNNNNNNN``.
- Postfix operators ``* + ? {m} {m,} {m,n}`` may be stacked; grouping with parentheses;
  an empty alternative is the empty string.

Choices where tools differ: a string literal cannot contain a raw line break (write
``\\n``); an empty class ``[]`` is an error; a rule defined twice is an error (llama.cpp
silently keeps the last definition, which is nearly always a mistake); negated token
references ``!<...>`` are rejected. Every error is a :class:`GrammarSyntaxError` with
``source="ebnf"`` and the 1-based line and column of the offending construct.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from ..errors import GrammarSyntaxError
from ..ir import EMPTY, Expr, Grammar, Ref, Repeat, Special, alt, literal, seq
from . import charsets
from .regex import parse_regex

__all__ = ["parse_ebnf"]

SpecialTokens = Callable[[str], int | None]

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "[": "[", "]": "]",
            "-": "-", "^": "^", "/": "/"}  # fmt: skip
_HEX_LENGTHS = {"x": 2, "u": 4, "U": 8}
_HEX = "0123456789abcdefABCDEF"
# Deeper nesting is an error rather than a RecursionError; no real grammar comes close.
MAX_NESTING = 100


def parse_ebnf(text: str, *, start: str = "root", special_tokens: SpecialTokens | None = None) -> Grammar:
    """Parse GBNF ``text`` into a :class:`Grammar` whose start rule is ``start``.

    ``special_tokens`` resolves a token reference written by text, such as
    ``<|eot_id|>`` (the full text, angle brackets included), to its token id, or None
    when the vocabulary has no such special token. References by id (``<[128009]>``)
    need no lookup.
    """
    if not isinstance(text, str):
        raise TypeError(f"grammar text must be a str, not {type(text).__name__}")
    return _Parser(text, special_tokens).parse(start)


def _is_name_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c in "-_")


class _Parser:
    def __init__(self, text: str, special_tokens: SpecialTokens | None):
        self.text = text
        self.i = 0
        self.special_tokens = special_tokens
        self.line_starts = [0] + [k + 1 for k, c in enumerate(text) if c == "\n"]
        self.definitions: dict[str, int] = {}  # rule name -> offset of its definition
        self.uses: list[tuple[str, int]] = []  # (rule name, offset) of every reference
        self.depth = 0  # open parentheses

    # ---------------------------------------------------------------- helpers

    def location(self, pos: int) -> tuple[int, int]:
        """1-based (line, column) of a text offset."""
        line = bisect.bisect_right(self.line_starts, pos)
        return line, pos - self.line_starts[line - 1] + 1

    def error(self, message: str, pos: int | None = None) -> GrammarSyntaxError:
        line, column = self.location(self.i if pos is None else pos)
        return GrammarSyntaxError(message, line=line, column=column, source="ebnf")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < len(self.text) else ""

    def skip_space(self) -> None:
        """Skip white space (line breaks included) and ``#`` comments."""
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == "#":
                end = self.text.find("\n", self.i)
                self.i = len(self.text) if end < 0 else end + 1
            elif c.isspace():
                self.i += 1
            else:
                return

    def name_at(self, pos: int) -> int:
        """End offset of the rule name starting at ``pos`` (``pos`` itself if none)."""
        end = pos
        while end < len(self.text) and _is_name_char(self.text[end]):
            end += 1
        return end

    def rule_starts_here(self) -> bool:
        """The cursor is at ``name ::=`` (the start of the next rule)."""
        end = self.name_at(self.i)
        if end == self.i:
            return False
        j = end
        while j < len(self.text) and self.text[j] in " \t":
            j += 1
        return self.text.startswith("::=", j)

    # ---------------------------------------------------------------- rules

    def parse(self, start: str) -> Grammar:
        grammar = Grammar(start=start)
        self.skip_space()
        while self.i < len(self.text):
            pos = self.i
            if not self.rule_starts_here():
                what = "a rule name" if self.name_at(pos) == pos else "'::=' after the rule name"
                raise self.error(f"expected {what} (a rule looks like: name ::= ...)")
            end = self.name_at(pos)
            name = self.text[pos:end]
            if name in self.definitions:
                first, _ = self.location(self.definitions[name])
                raise self.error(f"rule '{name}' is defined twice (first at line {first})", pos)
            self.definitions[name] = pos
            self.i = self.text.index("::=", end) + 3
            grammar.rules[name] = self.alternatives(nested=False)
            if self.i < len(self.text) and self.peek() == ")":
                raise self.error("unbalanced ')'")
        for name, pos in self.uses:
            if name not in self.definitions:
                raise self.error(f"undefined rule '{name}'", pos)
        if start not in grammar.rules:
            raise self.error(f"the grammar has no start rule '{start}'", 0)
        return grammar

    def alternatives(self, nested: bool) -> Expr:
        branches = [self.sequence(nested)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence(nested))
        return alt(*branches)

    def sequence(self, nested: bool) -> Expr:
        items: list[Expr] = []
        while True:
            self.skip_space()
            c = self.peek()
            if not c or c in "|)" or (not nested and self.rule_starts_here()):
                return seq(*items) if items else EMPTY
            items.append(self.postfix(self.primary()))

    def postfix(self, item: Expr) -> Expr:
        while True:
            self.skip_space()
            c = self.peek()
            if c == "*":
                item = Repeat(item, 0, None)
            elif c == "+":
                item = Repeat(item, 1, None)
            elif c == "?":
                item = Repeat(item, 0, 1)
            elif c == "{":
                item = self.bounded(item)
                continue
            else:
                return item
            self.i += 1

    def bounded(self, item: Expr) -> Expr:
        """``{m}``, ``{m,}`` or ``{m,n}`` applied to ``item``; the cursor is at '{'."""
        pos = self.i
        self.i += 1
        lo = self.integer(pos)
        hi: int | None = lo
        self.skip_space()
        if self.peek() == ",":
            self.i += 1
            self.skip_space()
            hi = self.integer(pos) if "0" <= self.peek() <= "9" else None
        self.skip_space()
        if self.peek() != "}":
            raise self.error("expected '}' to close the repetition bounds", pos)
        self.i += 1
        if hi is not None and hi < lo:
            raise self.error(f"bad repetition bounds {{{lo},{hi}}}: max is below min", pos)
        return Repeat(item, lo, hi)

    def integer(self, pos: int) -> int:
        self.skip_space()
        start = self.i
        while "0" <= self.peek() <= "9":
            self.i += 1
        if start == self.i:
            raise self.error("expected a number in the repetition bounds", pos)
        return int(self.text[start : self.i])

    # ---------------------------------------------------------------- terminals

    def primary(self) -> Expr:
        pos, c = self.i, self.peek()
        if _is_name_char(c):
            end = self.name_at(pos)
            name = self.text[pos:end]
            self.uses.append((name, pos))
            self.i = end
            return Ref(name)
        if c == '"':
            return literal(self.string())
        if c == "[":
            return charsets.utf8(tuple(self.char_class()))
        if c == ".":
            self.i += 1
            return charsets.utf8(tuple(charsets.ANY))
        if c == "(":
            if self.depth >= MAX_NESTING:
                raise self.error(f"parentheses nested more than {MAX_NESTING} deep")
            self.i += 1
            self.depth += 1
            inner = self.alternatives(nested=True)
            self.depth -= 1
            if self.peek() != ")":
                raise self.error("missing ')': unterminated group", pos)
            self.i += 1
            return inner
        if c == "<":
            return self.token_reference()
        if c == "!" and self.peek(1) == "<":
            raise self.error("negated token references '!<...>' are not supported")
        if c == "/":
            return self.regex_terminal()
        raise self.error(f"unexpected character {c!r}")

    def string(self) -> str:
        pos = self.i
        self.i += 1
        out: list[str] = []
        while self.peek() != '"':
            if self.peek() in ("", "\n"):
                raise self.error("unterminated string literal", pos)
            out.append(self.char())
        self.i += 1
        return "".join(out)

    def char(self) -> str:
        """One possibly escaped character of a string or class."""
        c = self.peek()
        if c != "\\":
            self.i += 1
            return c
        pos = self.i
        e = self.peek(1)
        if e in _ESCAPES:
            self.i += 2
            return _ESCAPES[e]
        if e in _HEX_LENGTHS:
            n = _HEX_LENGTHS[e]
            digits = self.text[self.i + 2 : self.i + 2 + n]
            if len(digits) != n or any(d not in _HEX for d in digits):
                raise self.error(f"escape \\{e} needs exactly {n} hex digits", pos)
            cp = int(digits, 16)
            if cp > charsets.MAX_CODEPOINT or 0xD800 <= cp <= 0xDFFF:
                raise self.error(f"escape \\{e}{digits} is not a valid Unicode scalar value", pos)
            self.i += 2 + n
            return chr(cp)
        raise self.error(f"unknown escape '\\{e}'" if e.strip() else "unterminated escape", pos)

    def char_class(self) -> charsets.CharSet:
        pos = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        while self.peek() != "]":
            if self.peek() in ("", "\n"):
                raise self.error("unterminated character class", pos)
            item_pos = self.i
            lo = ord(self.char())
            hi = lo
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                hi = ord(self.char())
                if hi < lo:
                    raise self.error(f"bad character range {chr(lo)!r}-{chr(hi)!r}", item_pos)
            ranges.append((lo, hi))
        self.i += 1
        if not ranges:
            raise self.error("empty character class", pos)
        result = charsets.normalize(ranges)
        return charsets.complement(result) if negated else result

    def token_reference(self) -> Expr:
        pos = self.i
        if self.text.startswith("<[", pos):
            end = self.text.find("]>", pos)
            digits = self.text[pos + 2 : end] if end >= 0 else ""
            if not digits.isascii() or not digits.isdigit():
                raise self.error("a token id reference looks like <[128009]>", pos)
            self.i = end + 2
            return Special(int(digits))
        end = pos + 1
        while end < len(self.text) and self.text[end] != ">" and not self.text[end].isspace():
            end += 1
        if end >= len(self.text) or self.text[end] != ">" or end == pos + 1:
            raise self.error("unterminated special token reference '<...>'", pos)
        token = self.text[pos : end + 1]
        if self.special_tokens is None:
            raise self.error(f"special token {token} needs a vocabulary to resolve it (or write <[id]>)", pos)
        token_id = self.special_tokens(token)
        if token_id is None:
            raise self.error(f"unknown special token {token}", pos)
        self.i = end + 1
        return Special(token_id)

    def regex_terminal(self) -> Expr:
        """``/pattern/flags``: a regex matched in full (see :func:`parse_regex`)."""
        pos = self.i
        j = pos + 1
        in_class = False
        while j < len(self.text) and self.text[j] != "\n" and (in_class or self.text[j] != "/"):
            c = self.text[j]
            if c == "\\":
                j += 1
            elif c == "[":
                in_class = True
            elif c == "]":
                in_class = False
            j += 1
        if j >= len(self.text) or self.text[j] != "/":
            raise self.error("unterminated regex terminal '/.../'", pos)
        pattern = self.text[pos + 1 : j]
        self.i = j + 1
        flags = ""
        while self.peek().isalpha():
            if self.peek() not in "is":
                raise self.error(f"unsupported regex flag '{self.peek()}' (only i and s)")
            flags += self.peek()
            self.i += 1
        prefix = f"(?{flags})" if flags else ""
        try:
            return parse_regex(prefix + pattern)
        except GrammarSyntaxError as err:
            # Point into the grammar text: the pattern starts one character after '/'.
            raise self.error(err.message, pos + 1 + max(err.column - 1 - len(prefix), 0)) from None
