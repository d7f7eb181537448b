"""Regex front-end: recognition agrees with Python's ``re``; errors point at the construct."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tokensieve.errors import GrammarSyntaxError
from tokensieve.frontends import charsets
from tokensieve.frontends.regex import RegexConstraints, parse_regex, parse_regex_constraints, regex_grammar
from tokensieve.ir import Alt, Expr, Grammar, Repeat, Seq

# ----------------------------------------------------------------------------- random patterns

_LEAVES = [
    "a", "b", "1", " ", "_", "é", "\\.", "\\-", ".", "\\d", "\\w", "\\s", "\\D", "\\W", "\\S",
    "[a-c]", "[^ab]", "[\\d_]", "[é-ë]", "\\x41", "\\u00e9", "\\n", "[.]", "[^\\s]",
]  # fmt: skip
_QUANTS = ["*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "??", "{1,3}?"]


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(children, min_size=1, max_size=3).map("".join),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
        children.map(lambda x: f"({x})"),
        st.tuples(children, st.sampled_from(_QUANTS)).map(lambda t: f"(?:{t[0]}){t[1]}"),
    )


patterns = st.recursive(st.sampled_from(_LEAVES), _extend, max_leaves=6)
# Text without the non-ASCII white space where ECMAScript's \s and Python's ASCII \s differ.
_NON_ASCII_SPACE = "".join(chr(c) for lo, hi in charsets.SPACE for c in range(lo, hi + 1) if c > 0x7F)
_chars = st.characters(exclude_categories=("Cs",), exclude_characters=_NON_ASCII_SPACE)
texts = st.text(alphabet=st.sampled_from("ab1 _.é-A\nZë"), max_size=6)


def _python(pattern: str) -> re.Pattern[str]:
    return re.compile("(?a)" + pattern)  # ASCII \d \w \s, as documented for tokensieve


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, others=st.lists(texts, max_size=5), data=st.data())
def test_fullmatch_agrees_with_python_re(pattern: str, others: list[str], data: st.DataObject) -> None:
    oracle = Oracle(regex_grammar(pattern))
    python = _python(pattern)
    members = [data.draw(st.from_regex(python, fullmatch=True, alphabet=_chars)) for _ in range(2)]
    for text in members:
        encoded = text.encode()
        assert oracle.is_complete(encoded), (pattern, text)
        # Every byte prefix of a member is viable, even one that splits a UTF-8 character.
        assert all(oracle.is_viable_prefix(encoded[:i]) for i in range(len(encoded))), (pattern, text)
        assert not oracle.is_viable_prefix(encoded + b"\xff")
    for text in others:
        assert oracle.is_complete(text.encode()) == bool(python.fullmatch(text)), (pattern, text)


@settings(max_examples=60, deadline=None)
@given(pattern=patterns, others=st.lists(st.text(alphabet="aAbB1 _é", max_size=5), max_size=5))
def test_ignorecase_agrees_with_python_re_on_ascii_letters(pattern: str, others: list[str]) -> None:
    # Python's ASCII mode folds only ASCII letters, tokensieve all of Unicode: the texts
    # hold ASCII letters and é but never É, where the two foldings agree.
    oracle = Oracle(regex_grammar("(?i)" + pattern))
    python = re.compile("(?ai)" + pattern)
    for text in others:
        assert oracle.is_complete(text.encode()) == bool(python.fullmatch(text)), (pattern, text)


@settings(max_examples=80, deadline=None)
@given(
    pattern=patterns,
    start=st.sampled_from(["", "^", "\\A"]),
    end=st.sampled_from(["", "$", "\\z"]),
    haystacks=st.lists(texts, min_size=1, max_size=5),
)
def test_search_agrees_with_python_re(pattern: str, start: str, end: str, haystacks: list[str]) -> None:
    oracle = Oracle(regex_grammar(start + pattern + end, search=True))
    # Python's '$' also matches before a final newline and has no \z (3.11): use \Z, ECMAScript's '$'.
    python = _python(start + pattern + ("\\Z" if end else ""))
    for text in haystacks:
        assert oracle.is_complete(text.encode()) == bool(python.search(text)), (pattern, text)


_anchored_patterns = st.recursive(
    st.sampled_from(["a", "b", "\\d", ".", "^", "$"]), _extend, max_leaves=6
)


@settings(max_examples=150, deadline=None)
@given(pattern=_anchored_patterns, texts=st.lists(st.text(alphabet="ab1\n", max_size=4), max_size=6))
def test_anchors_anywhere_agree_with_python_re(pattern: str, texts: list[str]) -> None:
    try:
        full, anywhere = Oracle(regex_grammar(pattern)), Oracle(regex_grammar(pattern, search=True))
    except GrammarSyntaxError as err:
        assert "both '^' and '$'" in err.message
        return
    python = _python(pattern.replace("$", "\\Z"))  # ECMAScript's '$' is Python's \Z
    for text in texts:
        assert full.is_complete(text.encode()) == bool(python.fullmatch(text)), (pattern, text)
        assert anywhere.is_complete(text.encode()) == bool(python.search(text)), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "accepted", "rejected"),
    [
        ("^a|b$", ["a", "b"], ["ab", ""]),
        ("a^b|c", ["c"], ["ab", "a^b"]),  # '^' after a non-empty match never holds
        ("^tape\\d$(\\.alt)?", ["tape1"], ["tape1.alt"]),  # nothing may follow '$'
        ("(a($|/))+", ["a", "a/a/", "a/a"], ["aa", "a/aa"]),
        ("(?:^a|b){2}", ["ab", "bb"], ["a", "ba", "aa"]),  # the '^' iteration is the first of two
        ("(?:a|b$){2,3}", ["ab", "aab", "aa"], ["b", "ba", "abb"]),  # the '$' iteration is the last
        ("(?:a?|^b$)+c?", ["b", "aa", ""], ["bc", "ab"]),
        ("(?i)straße", ["STRAßE", "Straße"], ["strasse"]),
        ("(?i)[a-c]k", ["Bk", "b\u212a"], ["dk"]),  # KELVIN SIGN folds to k, as in Python
        ("(?i)[^a]", ["b", "é"], ["a", "A"]),
        ("(?i)\\W[\\W]", ["--"], ["kk", "ss", "-k"]),  # class escapes are not case-folded
        ("(?i:a)b", ["Ab"], ["aB"]),
        ("(?s).", ["\n", "x"], [""]),
        (".", ["é", "\U0001F600"], ["\n"]),
        ("\\uD83D\\uDE00|\\u{1F601}|\\U0001F602", ["😀", "😁", "😂"], ["", "😀😀"]),
        ("\\p{Lu}\\p{Ll}+\\P{L}", ["Ωmega!", "Ab1"], ["ab1", "AB1"]),
        ("\\p{gc=Nd}\\p{Letter}", ["٣x"], ["xx"]),
        ("a{2,}b{c}d{}", ["aab{c}d{}", "aaab{c}d{}"], ["ab{c}d{}"]),
        ("(?P<year>\\d{4})-(?<m>\\d\\d)(?#comment)", ["2024-01"], ["2024-1"]),
        ("[\\]\\-^]+", ["]-^"], ["a"]),
        ("\\N{BULLET}\\0\\t\\/", ["\u2022\0\t/"], ["\u2022"]),
        ("", [""], ["a"]),
        ("[\\w-.]+", ["a-.", "_"], [" "]),  # ECMAScript Annex B: '-' next to a class escape is literal
        ("[\\d-a-c]", ["-", "a", "1", "c"], ["b"]),  # \d, '-', 'a', then '-' and 'c'
        ("a|", ["a", ""], ["b"]),
    ],
)
def test_examples(pattern: str, accepted: list[str], rejected: list[str]) -> None:
    oracle = Oracle(regex_grammar(pattern))
    for text in accepted:
        assert oracle.is_complete(text.encode()), text
    for text in rejected:
        assert not oracle.is_complete(text.encode()), text


def test_search_without_anchors_allows_newlines_around() -> None:
    oracle = Oracle(regex_grammar("ab", search=True))
    assert oracle.is_complete(b"x\nab\n")
    assert not oracle.is_complete(b"a\nb")


def _repeat_bounds(expr: Expr) -> list[tuple[int, int | None]]:
    todo, out = [expr], []
    while todo:
        e = todo.pop()
        if isinstance(e, Repeat):
            out.append((e.min, e.max))
            todo.append(e.item)
        elif isinstance(e, (Seq, Alt)):
            todo.extend(e.items)
    return out


@pytest.mark.parametrize(
    ("pattern", "kept"),
    [
        ("[a-z]{1,255}", []),  # contains a letter
        ("x[a-z]{0,9}", []),  # contains x
        ("\\d{2,}-[a-f]{1,40}", [(2, 2)]),  # contains dd-h
        ("^[a-z]{1,255}", []),  # starts with a letter
        ("[a-z]{1,255}$", []),  # ends with a letter
        ("^[a-z]{1,255}$", [(1, 255)]),  # anchored on both sides: the bound is the language
        ("(?:a{3,9}|b)c", [(3, 3)]),  # per branch of an alternation at the edge
        ("(?:a{3,9}|b*)c", []),  # an edge that may be empty: contains c
    ],
)
def test_search_pads_absorb_repetitions_at_unanchored_edges(
    pattern: str, kept: list[tuple[int, int | None]]
) -> None:
    expr = parse_regex(pattern, search=True)
    padding = (0, None)  # the any-text pads are the only unbounded repetitions left
    assert sorted(b for b in _repeat_bounds(expr) if b != padding) == sorted(kept)
    python = _python(pattern)
    oracle = Oracle(regex_grammar(pattern, search=True))
    for text in ["", "a", "ab1", "x", "xy", "12-a", "1-a", "aaab", "aaac", "bc", "c", "Z\nq", "99-ffz"]:
        assert oracle.is_complete(text.encode()) == bool(python.search(text)), (pattern, text)


def test_empty_class_intersection_is_the_empty_language() -> None:
    assert Oracle(regex_grammar("[^\\s\\S]")).is_empty_language


def test_pathological_repetition_is_built_lazily() -> None:
    start = time.perf_counter()
    expr = parse_regex("(a{1000}){1000}")
    assert time.perf_counter() - start < 0.5
    assert expr == Repeat(Repeat(parse_regex("a"), 1000, 1000), 1000, 1000)


@pytest.mark.parametrize(
    ("pattern", "column", "fragment"),
    [
        ("ab(?=c)", 3, "lookahead"),
        ("ab(?!c)", 3, "negative lookahead"),
        ("a(?<=b)", 2, "lookbehind"),
        ("a(?<!b)", 2, "negative lookbehind"),
        ("(a)\\1", 4, "backreferences"),
        ("(?<n>a)\\k<n>", 8, "backreferences"),
        ("(?P<n>a)(?P=n)", 9, "backreferences"),
        ("a\\b", 2, "word boundary"),
        ("(?>a)", 1, "atomic"),
        ("a++", 3, "possessive"),
        ("a**", 3, "multiple repeat"),
        ("*a", 1, "nothing to repeat"),
        ("x|^*", 4, "nothing to repeat"),
        ("(?m)^a$", 1, "multiline"),
        ("(?x)a", 1, "verbose"),
        ("a(?i)b", 2, "only allowed at the start"),
        ("x(^a|b$)+", 2, "both '^' and '$'"),
        ("(ab", 1, "unterminated group"),
        ("ab)", 3, "unbalanced"),
        ("x[a-", 2, "unterminated character class"),
        ("x[]", 2, "'[]'"),
        ("a{5,2}", 2, "bad repetition bounds"),
        ("a{,2}", 2, "ambiguous quantifier"),
        ("\\p{Greek}", 1, "Unicode property 'Greek'"),
        ("\\pL", 1, "property name in braces"),
        ("ab\\q", 3, "unknown escape"),
        ("\\x4", 1, "2 hex digits"),
        ("\\uD800", 1, "lone surrogate"),
        ("[z-a]", 2, "bad character range"),
        ("\\012", 1, "octal"),
        ("ab\\", 3, "lone backslash"),
        ("(" * 101 + "a" + ")" * 101, 101, "nested more than 100 deep"),
    ],
)
def test_errors_name_the_construct_and_its_column(pattern: str, column: int, fragment: str) -> None:
    with pytest.raises(GrammarSyntaxError) as info:
        parse_regex(pattern)
    err = info.value
    assert (err.line, err.column, err.source) == (1, column, "regex")
    assert fragment in err.message


def test_malformed_examples_are_malformed_for_python_too() -> None:
    for pattern in ["a**", "*a", "(ab", "ab)", "[z-a]"]:
        with pytest.raises(re.error):
            re.compile(pattern)


@settings(max_examples=300, deadline=None)
@given(
    pattern=st.text(alphabet="ab()[]{}|*+?^$\\.-,0123:<>!=PpuxdwsAZkNi#/ \n", max_size=14),
    search=st.booleans(),
)
def test_any_input_parses_or_raises_a_syntax_error(pattern: str, search: bool) -> None:
    try:
        parse_regex(pattern, search=search)
    except GrammarSyntaxError as err:
        assert 1 <= err.column <= len(pattern) + 1


def _matches(constraints: RegexConstraints, text: str) -> bool:
    data = text.encode()
    return (
        Oracle(Grammar({"root": constraints.language})).is_complete(data)
        and all(Oracle(Grammar({"root": r})).is_complete(data) for r in constraints.required)
        and not any(Oracle(Grammar({"root": f})).is_complete(data) for f in constraints.forbidden)
    )


@pytest.mark.parametrize(
    ("pattern", "search", "texts"),
    [
        ("^(?!pattern$).*$", True, ["pattern", "patterns", "x", "", "pattern\n"]),
        ("^(?=[^=]+$)(?!\\s+$)(.|\\n)+$", True, ["a=b", "ab", "  ", " a ", "", "a\nb"]),
        ("^(?=.*\\d)(?=.*[a-z]).{6,}$", True, ["abc123", "abcdef", "123456", "ab1", "xx1yyyy"]),
        ("(?=a)(?!ab$)\\w+", False, ["a", "ab", "abc", "b", ""]),
        ("^(?=ab)", True, ["ab", "abc", "a", "xab"]),
    ],
)
def test_leading_lookaheads_as_constraints(pattern: str, search: bool, texts: list[str]) -> None:
    constraints = parse_regex_constraints(pattern, search=search)
    python = _python(pattern.replace("$", "\\Z"))
    for text in texts:
        expected = python.search(text) if search else python.fullmatch(text)
        assert _matches(constraints, text) == bool(expected), text


@settings(max_examples=60, deadline=None)
@given(
    looks=st.lists(st.tuples(st.booleans(), patterns, st.booleans()), min_size=1, max_size=2),
    body=patterns,
    texts=st.lists(texts, max_size=4),
)
def test_random_leading_lookaheads(looks: list[tuple[bool, str, bool]], body: str, texts: list[str]) -> None:
    prefix = "".join(f"(?{'!' if neg else '='}{p}{'$' if end else ''})" for neg, p, end in looks)
    pattern = "^" + prefix + body
    constraints = parse_regex_constraints(pattern, search=True)
    python = _python(pattern.replace("$", "\\Z"))
    for text in texts:
        assert _matches(constraints, text) == bool(python.search(text)), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "search", "column"),
    [("a(?=b)", False, 2), ("(?=a)b", True, 1), ("^a(?!b)", True, 3), ("^(?=(?=a))", True, 5)],
)
def test_lookaheads_elsewhere_are_errors(pattern: str, search: bool, column: int) -> None:
    with pytest.raises(GrammarSyntaxError) as info:
        parse_regex_constraints(pattern, search=search)
    assert info.value.column == column
    assert "lookahead" in info.value.message
    assert parse_regex_constraints("^ab", search=True).required == ()
