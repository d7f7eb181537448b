"""EBNF / GBNF front-end: real llama.cpp grammars, every construct, exact error locations."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle import Oracle
from tokensieve.errors import GrammarSyntaxError
from tokensieve.frontends.ebnf import parse_ebnf
from tokensieve.ir import Special

# llama.cpp's grammars/json.gbnf: line breaks inside parentheses, a body starting on the
# line after '::=', an empty alternative, trailing comments, escapes inside classes.
LLAMA_JSON = r"""
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
"""

LLAMA_ARITHMETIC = r"""
root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
"""

LLAMA_CHESS = r"""
# Specifies chess moves as a list in algebraic notation, using PGN conventions

# Force first move to "1. ", then any 1-2 digit number after, relying on model to follow the pattern
root    ::= "1. " move " " move "\n" ([1-9] [0-9]? ". " move " " move "\n")+
move    ::= (pawn | nonpawn | castle) [+#]?

# piece type, optional file/rank, optional capture, dest file & rank
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]

# optional file & capture, dest file & rank, optional promotion
pawn    ::= ([a-h] "x")? [a-h] [1-8] ("=" [NBKQR])?

castle  ::= "O-O" "-O"?
"""

LLAMA_JAPANESE = r"""
# A probably incorrect grammar for Japanese
root        ::= jp-char+ ([ \t\n] jp-char+)*
jp-char     ::= hiragana | katakana | punctuation | cjk
hiragana    ::= [ぁ-ゟ]
katakana    ::= [ァ-ヿ]
punctuation ::= [、-〾]
cjk         ::= [一-鿿]
"""

LLAMA_LIST = r"""
root ::= item+

# Excludes various line break characters
item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n"
"""


@pytest.mark.parametrize(
    ("grammar", "accepted", "rejected"),
    [
        (
            LLAMA_CHESS,
            ["1. e4 e5\n2. Nf3 Nc6\n", "1. e4 e5\n2. O-O-O exd8=Q#\n"],
            ["1. e4 e5\n", "1. e9 e5\n2. a1 a2\n"],
        ),
        (LLAMA_JAPANESE, ["こんにちは 世界", "カタカナ、"], ["hello", "こんにちは  世界"]),
        (LLAMA_LIST, ["- milk\n- eggs\n"], ["- milk", "- a\u2028b\n", "-\n"]),
    ],
    ids=["chess", "japanese", "list"],
)
def test_more_llama_cpp_grammars(grammar: str, accepted: list[str], rejected: list[str]) -> None:
    oracle = Oracle(parse_ebnf(grammar))
    for text in accepted:
        assert oracle.is_complete(text.encode()), text
    for text in rejected:
        assert not oracle.is_complete(text.encode()), text


def test_llama_cpp_json_grammar() -> None:
    oracle = Oracle(parse_ebnf(LLAMA_JSON))
    for value in [{"a": [1, 2.5, "x\ny", []], "b": None}, {}, {"k": {"n": [True, False]}}]:
        assert oracle.is_complete(json.dumps(value).encode()), value
    assert oracle.is_complete(b'{"a": 1}\n')
    assert not oracle.is_complete(b"[]")  # the root is an object
    assert not oracle.is_complete(b'{"a": [1, 2}')
    assert not oracle.is_viable_prefix(b'{"a" 1')
    assert not oracle.is_viable_prefix(b'["\x01')


def test_llama_cpp_arithmetic_grammar() -> None:
    oracle = Oracle(parse_ebnf(LLAMA_ARITHMETIC))
    assert oracle.is_complete(b"a +(b*2) = c\n")  # no ws after an operator in this grammar
    assert oracle.is_complete(b"x=1\ny = (z)\n")
    assert not oracle.is_complete(b"a + = c\n")
    assert oracle.is_viable_prefix(b"(((a")


@pytest.mark.parametrize(
    ("grammar", "accepted", "rejected"),
    [
        ('root ::= "a" | "b" "c"', ["a", "bc"], ["b", "ac"]),
        ('root ::= my-rule_2\nmy-rule_2 ::= "x"{2} "y"{1,} "z"{0,1}', ["xxy", "xxyyz"], ["xy", "xxyzz"]),
        ('root ::= [^a-c\\]] .', ["d\n", "zx"], ["ax", "]x"]),
        ('root ::= "\\x41\\u00e9\\U0001F600\\t\\"\\\\"', ['Aé😀\t"\\'], ["A"]),
        ('root ::= ("ab" | "c")* "!"', ["!", "abc!", "cab!"], ["a!"]),
        ('root ::= /[0-9]+(\\.[0-9]+)?/ "s"', ["12s", "1.5s"], ["1.s", "s"]),
        ('root ::= /hello/i " " /a.b/s', ["HeLLo a\nb"], ["hello ab"]),
        ('root ::= /[/]+/ "/"', ["///"], ["/"]),
        ('root ::= "a"\n  "b"   # continues: the next line is not a new rule\n  "c"', ["abc"], ["a"]),
        ("root ::=", [""], ["a"]),
        ('root ::= "x" | ', ["x", ""], ["xx"]),
        ('root ::= [-a-]+', ["-a-"], ["b"]),
    ],
)
def test_constructs(grammar: str, accepted: list[str], rejected: list[str]) -> None:
    oracle = Oracle(parse_ebnf(grammar))
    for text in accepted:
        assert oracle.is_complete(text.encode()), text
    for text in rejected:
        assert not oracle.is_complete(text.encode()), text


def test_special_tokens_by_id_and_by_name() -> None:
    names = {"<|eot_id|>": 128009, "<think>": 5}
    g = parse_ebnf('root ::= <think> "x" <[7]> <|eot_id|>', special_tokens=names.get)
    oracle = Oracle(g)
    assert oracle.is_complete([5, b"x", 7, 128009])
    assert not oracle.is_viable_prefix(b"<think>")  # special tokens are never text
    assert g.rules["root"].items[0] == Special(5)  # type: ignore[union-attr]


def test_other_start_rule() -> None:
    oracle = Oracle(parse_ebnf('expr ::= "1" | "(" expr ")"', start="expr"))
    assert oracle.is_complete(b"((1))")


@pytest.mark.parametrize(
    ("grammar", "line", "column", "fragment"),
    [
        ('root ::= "a" b\nc ::= "c"', 1, 14, "undefined rule 'b'"),
        ('x ::= "a"\n\nroot ::= x\n  | y', 4, 5, "undefined rule 'y'"),
        ('a ::= "x"', 1, 1, "no start rule 'root'"),
        ("", 1, 1, "no start rule 'root'"),
        ('root ::= "a"\nroot ::= "b"', 2, 1, "defined twice (first at line 1)"),
        ('root ::= "abc\n', 1, 10, "unterminated string literal"),
        ('root ::= "a"\n  [a-z', 2, 3, "unterminated character class"),
        ("root ::= []", 1, 10, "empty character class"),
        ('root ::= "\\q"', 1, 11, "unknown escape"),
        ('root ::= "\\x4"', 1, 11, "2 hex digits"),
        ('root ::= "\\uD800"', 1, 11, "not a valid Unicode scalar"),
        ("root ::= [z-a]", 1, 11, "bad character range"),
        ('root ::= "a"{3,2}', 1, 13, "bad repetition bounds"),
        ('root ::= "a"{x}', 1, 13, "expected a number"),
        ('root ::= "a"{2', 1, 13, "expected '}'"),
        ('root ::= ("a"', 1, 10, "unterminated group"),
        ('root ::= "a")', 1, 13, "unbalanced ')'"),
        ('root ::= "a" : "b"', 1, 14, "unexpected character ':'"),
        ('"a" ::= "b"', 1, 1, "expected a rule name"),
        ('root "a"', 1, 1, "expected '::='"),
        ("root ::= <|eot_id|>", 1, 10, "needs a vocabulary"),
        ("root ::= !<[2]>", 1, 10, "negated token references"),
        ("root ::= <[12x]>", 1, 10, "<[128009]>"),
        ("root ::= <|eot_id", 1, 10, "unterminated special token"),
        ("root ::= /abc", 1, 10, "unterminated regex"),
        ("root ::=\n  /ab(?=c)/", 2, 6, "lookahead"),
        ("root ::= /a/x", 1, 13, "unsupported regex flag"),
        ("root ::= " + "(" * 101 + '"a"' + ")" * 101, 1, 110, "nested more than 100 deep"),
    ],
)
def test_errors_point_at_the_construct(grammar: str, line: int, column: int, fragment: str) -> None:
    with pytest.raises(GrammarSyntaxError) as info:
        parse_ebnf(grammar)
    err = info.value
    assert (err.line, err.column, err.source) == (line, column, "ebnf"), err
    assert fragment in err.message


def test_unknown_special_token_name() -> None:
    with pytest.raises(GrammarSyntaxError) as info:
        parse_ebnf('root ::= "a" <|nope|>', special_tokens=lambda name: None)
    assert (info.value.line, info.value.column) == (1, 14)
    assert "unknown special token <|nope|>" in info.value.message


@settings(max_examples=300, deadline=None)
@given(body=st.text(alphabet='ab:=()[]{}|*+?^.-,012<>!|"\\/ \n#xu', max_size=24))
def test_any_input_parses_or_raises_a_syntax_error(body: str) -> None:
    text = "root ::= " + body
    try:
        parse_ebnf(text, special_tokens=lambda name: 5 if name == "<|a|>" else None)
    except GrammarSyntaxError as err:
        assert 1 <= err.line <= text.count("\n") + 1
        assert 1 <= err.column <= len(text.splitlines()[err.line - 1] if text.splitlines() else "") + 1
