"""Parse a regular expression (the common subset of Python ``re`` and ECMAScript) into a small AST.

The AST keeps only what the language needs: character sets (one code point from a set
of ranges, with case-insensitivity already applied), concatenation, alternation,
repetition and the two anchors. Groups disappear (capturing is irrelevant to a
recognizer); lazy quantifiers are the same language as greedy ones.

Lookaheads become :class:`Look` nodes; :mod:`.regex` decides where they can be honoured.
Every other construct the recognizer cannot honour exactly raises
:class:`GrammarSyntaxError` naming it, with ``line=1`` and ``column`` = the 1-based
character offset where it starts: lookbehind, backreferences, word boundaries, atomic
groups and possessive quantifiers (both change the language), conditionals, and inline
flags other than ``i``, ``s``, ``u``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final

from ..errors import GrammarSyntaxError
from . import charsets
from .charsets import CharSet

__all__ = ["Anchor", "Chars", "Concat", "Look", "Node", "Quant", "Union", "parse_regex_ast"]


@dataclass(frozen=True)
class Chars:
    """One character from ``ranges`` (a normalized code point set)."""

    ranges: tuple[tuple[int, int], ...]
    pos: int


@dataclass(frozen=True)
class Concat:
    items: tuple[Node, ...]
    pos: int


@dataclass(frozen=True)
class Union:
    items: tuple[Node, ...]
    pos: int


@dataclass(frozen=True)
class Quant:
    item: Node
    min: int
    max: int | None
    pos: int


@dataclass(frozen=True)
class Anchor:
    """``^`` / ``\\A`` (``start=True``) or ``$`` / ``\\Z`` / ``\\z`` (``start=False``)."""

    start: bool
    pos: int


@dataclass(frozen=True)
class Look:
    """A lookahead ``(?=item)`` (``negative=False``) or ``(?!item)``; ``pos`` is its '('."""

    item: Node
    negative: bool
    pos: int


Node = Chars | Concat | Union | Quant | Anchor | Look


@dataclass(frozen=True)
class _Flags:
    ignorecase: bool = False
    dotall: bool = False


_SIMPLE_ESCAPES: Final = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B}
_CLASS_ESCAPES: Final[dict[str, tuple[CharSet, bool]]] = {
    "d": (charsets.DIGIT, False),
    "D": (charsets.DIGIT, True),
    "w": (charsets.WORD, False),
    "W": (charsets.WORD, True),
    "s": (charsets.SPACE, False),
    "S": (charsets.SPACE, True),
}
_HEX: Final = "0123456789abcdefABCDEF"


def parse_regex_ast(pattern: str) -> Node:
    """Parse ``pattern`` into an AST; raise :class:`GrammarSyntaxError` on anything unsupported."""
    return _Parser(pattern).parse()


# Deeper group nesting than this is an error rather than a RecursionError (no real
# pattern comes close; each level costs a few Python frames here and in the lowering).
MAX_NESTING: Final = 100


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"  # ASCII only: both dialects read "{٣}" as literal text


class _Parser:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.depth = 0  # open groups

    # ---------------------------------------------------------------- helpers

    def error(self, message: str, pos: int | None = None) -> GrammarSyntaxError:
        column = (self.i if pos is None else pos) + 1
        return GrammarSyntaxError(message, line=1, column=column, source="regex")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def startswith(self, text: str) -> bool:
        return self.p.startswith(text, self.i)

    # ---------------------------------------------------------------- structure

    def parse(self) -> Node:
        flags = self.leading_flags()
        node = self.alternation(flags)
        if self.i < len(self.p):  # only an unbalanced ')' stops the top-level alternation
            raise self.error("unbalanced ')'")
        return node

    def leading_flags(self) -> _Flags:
        """Global inline flags ``(?isu)`` at the very start of the pattern."""
        flags = _Flags()
        while self.startswith("(?") and self.peek(2).isalpha() and self.peek(2) != "P":
            start = self.i
            j = self.i + 2
            while j < len(self.p) and self.p[j].isalpha():
                j += 1
            if j >= len(self.p) or self.p[j] != ")":
                break  # a scoped group like (?i:...), parsed as an atom
            flags = self.apply_flags(flags, self.p[start + 2 : j], "", start)
            self.i = j + 1
        return flags

    def apply_flags(self, flags: _Flags, on: str, off: str, pos: int) -> _Flags:
        ignorecase, dotall = flags.ignorecase, flags.dotall
        for letters, value in ((on, True), (off, False)):
            for f in letters:
                if f == "i":
                    ignorecase = value
                elif f == "s":
                    dotall = value
                elif f == "u":
                    pass  # Unicode matching is the only mode
                elif f in "mx":
                    name = "multiline" if f == "m" else "verbose"
                    raise self.error(f"inline flag '{f}' ({name} mode) is not supported", pos)
                else:
                    raise self.error(f"unsupported inline flag '{f}'", pos)
        return _Flags(ignorecase, dotall)

    def alternation(self, flags: _Flags) -> Node:
        start = self.i
        branches = [self.concatenation(flags)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concatenation(flags))
        return branches[0] if len(branches) == 1 else Union(tuple(branches), start)

    def concatenation(self, flags: _Flags) -> Node:
        start = self.i
        items: list[Node] = []
        while self.i < len(self.p) and self.peek() not in "|)":
            pos = self.i
            items.append(self.quantified(self.atom(flags), pos))
        return items[0] if len(items) == 1 else Concat(tuple(items), start)

    def quantified(self, atom: Node, pos: int) -> Node:
        """``atom`` (which starts at ``pos``) with the quantifier that follows, if any."""
        bounds = self.quantifier()
        if bounds is None:
            return atom
        qpos, lo, hi = bounds
        if isinstance(atom, Anchor):
            raise self.error("nothing to repeat: a quantifier cannot follow an anchor", qpos)
        if self.peek() == "?":
            self.i += 1  # lazy: same language as greedy
        elif self.peek() == "+":
            raise self.error(
                "possessive quantifiers are not supported (they change the language; use a greedy one)",
                self.i,
            )
        if self.quantifier(probe=True) is not None:
            raise self.error("multiple repeat: quantify a group instead, e.g. (?:a*)*", self.i)
        return Quant(atom, lo, hi, pos)

    def quantifier(self, probe: bool = False) -> tuple[int, int, int | None] | None:
        """Parse ``* + ? {m} {m,} {m,n}`` at the cursor; ``probe`` only looks."""
        pos, c = self.i, self.peek()
        simple = {"*": (0, None), "+": (1, None), "?": (0, 1)}
        if c in simple:
            if not probe:
                self.i += 1
            lo, hi = simple[c]
            return pos, lo, hi
        if c != "{":
            return None
        j = self.i + 1
        while j < len(self.p) and _is_digit(self.p[j]):
            j += 1
        lo_text = self.p[self.i + 1 : j]
        hi_text: str | None = lo_text
        if j < len(self.p) and self.p[j] == ",":
            k = j + 1
            while k < len(self.p) and _is_digit(self.p[k]):
                k += 1
            hi_text, j = self.p[j + 1 : k], k
        if j >= len(self.p) or self.p[j] != "}":
            return None  # not a quantifier: '{' is a literal (as in both Python and ECMAScript)
        if not lo_text:
            if hi_text == "" and j == self.i + 1:
                return None  # "{}" is literal text
            raise self.error(
                "ambiguous quantifier '{,n}' (Python reads {0,n}, ECMAScript literal text): "
                "write {0,n} or \\{",
                pos,
            )
        if probe:
            return pos, 0, None
        lo = int(lo_text)
        hi = int(hi_text) if hi_text else None
        if hi is not None and hi < lo:
            raise self.error(f"bad repetition bounds {{{lo},{hi}}}: max is below min", pos)
        self.i = j + 1
        return pos, lo, hi

    # ---------------------------------------------------------------- atoms

    def atom(self, flags: _Flags) -> Node:
        """One atom: a character (set), a group, or an anchor."""
        pos, c = self.i, self.peek()
        if c == "(":
            return self.group(flags)
        if c == "[":
            return self.char_class(flags)
        if c == ".":
            self.i += 1
            ranges = charsets.ANY if flags.dotall else charsets.complement([(0x0A, 0x0A)])
            return Chars(tuple(ranges), pos)
        if c == "^":
            self.i += 1
            return Anchor(True, pos)
        if c == "$":
            self.i += 1
            return Anchor(False, pos)
        if c in "*+?" or (c == "{" and self.quantifier(probe=True) is not None):
            raise self.error(f"nothing to repeat before '{c}'")
        if c == "\\":
            return self.escape(flags)
        self.i += 1
        return self.chars([(ord(c), ord(c))], flags, pos)

    def chars(self, ranges: CharSet, flags: _Flags, pos: int) -> Chars:
        ranges = charsets.normalize(ranges)
        if flags.ignorecase:
            ranges = charsets.case_closure(ranges)
        return Chars(tuple(ranges), pos)

    def group(self, flags: _Flags) -> Node:
        pos = self.i
        self.i += 1
        if self.startswith("?=") or self.startswith("?!"):  # lookahead: see regex.py for its uses
            negative = self.peek(1) == "!"
            self.i += 2
            return Look(self.group_body(flags, pos), negative, pos)
        inner_flags: _Flags | None = flags
        if self.peek() == "?":
            inner_flags = self.group_prefix(flags, pos)
        if inner_flags is None:  # a (?#comment) matches the empty string
            return Concat((), pos)
        return self.group_body(inner_flags, pos)

    def group_body(self, flags: _Flags, pos: int) -> Node:
        """The alternation inside a group and its ')'; ``pos`` is the '('."""
        if self.depth >= MAX_NESTING:
            raise self.error(f"groups nested more than {MAX_NESTING} deep", pos)
        self.depth += 1
        node = self.alternation(flags)
        self.depth -= 1
        if self.peek() != ")":
            raise self.error("missing ')': unterminated group", pos)
        self.i += 1
        # (?:^)* is legal, unlike ^*: keep a grouped anchor apart from a bare one.
        return Concat((node,), pos) if isinstance(node, Anchor) else node

    def group_prefix(self, flags: _Flags, pos: int) -> _Flags | None:
        """Consume what follows ``(?``; return the group's flags (None for a comment)."""
        rest = self.p[self.i :]
        for prefix, what in (
            ("?<=", "lookbehind"),
            ("?<!", "negative lookbehind"),
            ("?>", "atomic groups"),
            ("?P=", "backreferences"),
            ("?(", "conditional groups"),
        ):
            if rest.startswith(prefix):
                raise self.error(f"{what} '({prefix}...)' is not supported", pos)
        if rest.startswith("?:"):
            self.i += 2
            return flags
        if rest.startswith("?#"):
            end = self.p.find(")", self.i)
            if end < 0:
                raise self.error("missing ')': unterminated comment", pos)
            self.i = end + 1
            return None
        for prefix in ("?P<", "?<"):
            if rest.startswith(prefix):
                end = self.p.find(">", self.i)
                name = self.p[self.i + len(prefix) : end] if end >= 0 else ""
                if end < 0 or not name.isidentifier():
                    raise self.error("bad group name", pos)
                self.i = end + 1
                return flags
        # Scoped flags (?i:...) / (?-i:...) / (?s-i:...)
        j = self.i + 1
        while j < len(self.p) and (self.p[j].isalpha() or self.p[j] == "-"):
            j += 1
        spec = self.p[self.i + 1 : j]
        if j < len(self.p) and self.p[j] == ":" and spec:
            on, _, off = spec.partition("-")
            self.i = j + 1
            return self.apply_flags(flags, on, off, pos)
        if j < len(self.p) and self.p[j] == ")" and spec:
            raise self.error("global inline flags are only allowed at the start of the pattern", pos)
        raise self.error(f"unknown group extension '(?{self.peek(1)}'", pos)

    # ---------------------------------------------------------------- escapes

    def escape(self, flags: _Flags) -> Node:
        pos = self.i
        self.i += 1
        c = self.peek()
        if not c:
            raise self.error("pattern ends with a lone backslash", pos)
        if c in "AZz":
            self.i += 1
            return Anchor(c == "A", pos)
        if c in "bB":
            raise self.error(f"word boundary \\{c} is not supported", pos)
        if c in _CLASS_ESCAPES or c in "pP":
            # Class escapes are not case-folded: (?i)\W must not match "k" (as in Python).
            return Chars(tuple(charsets.normalize(self.class_escape(pos))), pos)
        if c == "k" or _is_digit(c) and c != "0":
            raise self.error(f"backreferences (\\{c}) are not supported", pos)
        cp = self.char_escape(pos)
        return self.chars([(cp, cp)], flags, pos)

    def class_escape(self, pos: int) -> CharSet:
        """``\\d \\w \\s`` (and negations) or ``\\p{...}``/``\\P{...}``; the cursor is after '\\'."""
        c = self.peek()
        self.i += 1
        if c in _CLASS_ESCAPES:
            base, negated = _CLASS_ESCAPES[c]
            return charsets.complement(base) if negated else list(base)
        if self.peek() != "{":
            raise self.error(f"\\{c} needs a property name in braces, e.g. \\{c}{{L}}", pos)
        end = self.p.find("}", self.i)
        if end < 0:
            raise self.error(f"unterminated \\{c}{{...}}", pos)
        name = self.p[self.i + 1 : end]
        self.i = end + 1
        ranges = charsets.unicode_property(name)
        if ranges is None:
            raise self.error(
                f"Unicode property '{name}' is not supported (general categories such as L, Lu, Nd are)", pos
            )
        return charsets.complement(ranges) if c == "P" else ranges

    def char_escape(self, pos: int) -> int:
        """A single-character escape; the cursor is after '\\'. Returns the code point."""
        c = self.peek()
        self.i += 1
        if c in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[c]
        if c == "0":
            if _is_digit(self.peek()):
                raise self.error("octal escapes are not supported; use \\xNN", pos)
            return 0
        if c == "x":
            return self.hex_digits(2, pos)
        if c == "U":
            return self.hex_digits(8, pos)
        if c == "u":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                digits = self.p[self.i + 1 : end] if end >= 0 else ""
                if not digits or len(digits) > 6 or any(d not in _HEX for d in digits):
                    raise self.error("bad \\u{...} escape", pos)
                self.i = end + 1
                return self.check_codepoint(int(digits, 16), pos)
            cp = self.hex_digits(4, pos)
            if 0xD800 <= cp <= 0xDBFF and self.startswith("\\u"):  # an ECMAScript surrogate pair
                save = self.i
                self.i += 2
                low = self.hex_digits(4, pos) if all(d in _HEX for d in self.p[self.i : self.i + 4]) else -1
                if 0xDC00 <= low <= 0xDFFF:
                    return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                self.i = save
            if 0xD800 <= cp <= 0xDFFF:
                raise self.error("lone surrogate escape: it cannot appear in UTF-8 text", pos)
            return cp
        if c == "N" and self.peek() == "{":
            end = self.p.find("}", self.i)
            try:
                ch = unicodedata.lookup(self.p[self.i + 1 : end]) if end >= 0 else ""
            except KeyError:
                ch = ""
            if len(ch) != 1:
                raise self.error("bad \\N{...} character name", pos)
            self.i = end + 1
            return ord(ch)
        if c.isascii() and c.isalnum():
            raise self.error(f"unknown escape \\{c}", pos)
        return ord(c)  # an escaped metacharacter or punctuation stands for itself

    def hex_digits(self, n: int, pos: int) -> int:
        digits = self.p[self.i : self.i + n]
        if len(digits) != n or any(d not in _HEX for d in digits):
            raise self.error(f"escape needs exactly {n} hex digits", pos)
        self.i += n
        return self.check_codepoint(int(digits, 16), pos)

    def check_codepoint(self, cp: int, pos: int) -> int:
        if cp > charsets.MAX_CODEPOINT:
            raise self.error(f"code point U+{cp:X} is beyond U+10FFFF", pos)
        return cp

    # ---------------------------------------------------------------- classes

    def char_class(self, flags: _Flags) -> Chars:
        pos = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        if self.peek() == "]":
            raise self.error(
                "'[]' / '[^]' mean different things in Python and ECMAScript; escape the bracket as \\]", pos
            )
        ranges: CharSet = []  # written characters and ranges: case-folded under (?i)
        escaped: CharSet = []  # class escapes such as \w: never case-folded
        while self.peek() != "]":
            if not self.peek():
                raise self.error("unterminated character class", pos)
            item_pos = self.i
            lo = self.class_atom()
            if self.peek() != "-" or self.peek(1) in ("]", ""):
                if isinstance(lo, int):
                    ranges.append((lo, lo))
                else:
                    escaped.extend(lo)
                continue
            self.i += 1
            hi = self.class_atom()
            if isinstance(lo, int) and isinstance(hi, int):
                if hi < lo:
                    raise self.error(f"bad character range {chr(lo)!r}-{chr(hi)!r}", item_pos)
                ranges.append((lo, hi))
            else:
                # A class escape at either end, as in [\w-.]: ECMAScript (Annex B) reads the
                # '-' literally and takes the union; Python rejects it, so no reading conflicts.
                for end in (lo, hi):
                    if isinstance(end, int):
                        ranges.append((end, end))
                    else:
                        escaped.extend(end)
                ranges.append((ord("-"), ord("-")))
        self.i += 1
        ranges = charsets.normalize(ranges)
        if flags.ignorecase:
            ranges = charsets.case_closure(ranges)
        ranges = charsets.normalize(ranges + escaped)
        if negated:
            ranges = charsets.complement(ranges)
        return Chars(tuple(ranges), pos)

    def class_atom(self) -> int | CharSet:
        """One class member: a code point, or a set for ``\\d``-style escapes."""
        c = self.peek()
        if c != "\\":
            self.i += 1
            return ord(c)
        pos = self.i
        self.i += 1
        e = self.peek()
        if not e:
            raise self.error("unterminated character class", pos)
        if e in _CLASS_ESCAPES or e in "pP":
            return self.class_escape(pos)
        if e == "b":
            self.i += 1
            return 0x08  # backspace inside a class, in both dialects
        if _is_digit(e) and e != "0" or e in "kABZz":
            raise self.error(f"\\{e} is not supported inside a character class", pos)
        return self.char_escape(pos)
