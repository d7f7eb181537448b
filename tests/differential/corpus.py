"""The differential corpus: grammars (GBNF text or front-end calls) with valid and invalid strings.

Each entry covers a shape of grammar that engines get wrong: JSON, precedence, nesting,
C-like and SQL-like languages, Unicode classes, left recursion, ambiguity, deep nesting,
large alternations and bounded repetitions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    ebnf: str | None = None  # GBNF text, or None when `kind` says which front-end to use
    kind: str = "ebnf"  # "ebnf" | "json" | "regex"
    valid: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


ARITHMETIC = r"""
root   ::= expr
expr   ::= expr ws ("+" | "-") ws term | term
term   ::= term ws ("*" | "/") ws factor | factor
factor ::= "(" ws expr ws ")" | number | "-" factor
number ::= [0-9]+ ("." [0-9]+)?
ws     ::= " "?
"""

NESTED_LISTS = r"""
root  ::= list
list  ::= "[" ( item ( "," " "? item )* )? "]"
item  ::= list | [a-z]+ | [0-9]+
"""

C_LIKE = r"""
root      ::= stmt+
stmt      ::= ws ( decl | assign | ifstmt | whilestmt | block | call ";" )
decl      ::= "int " ident ( " = " expr )? ";"
assign    ::= ident " = " expr ";"
ifstmt    ::= "if (" expr ") " stmt ( ws "else " stmt )?
whilestmt ::= "while (" expr ") " stmt
block     ::= "{" stmt* ws "}"
call      ::= ident "(" ( expr ( ", " expr )* )? ")"
expr      ::= operand ( " " op " " operand )*
operand   ::= ident | [0-9]+ | call | "(" expr ")"
op        ::= "+" | "-" | "*" | "<" | "==" | "&&"
ident     ::= [a-zA-Z_] [a-zA-Z_0-9]*
ws        ::= [ \n]*
"""

SQL_LIKE = r"""
root    ::= "SELECT " cols " FROM " ident where? order? limit? ";"
cols    ::= "*" | ident ( ", " ident )*
where   ::= " WHERE " cond ( (" AND " | " OR ") cond )*
cond    ::= ident " " cmp " " value
cmp     ::= "=" | "<" | ">" | "<=" | ">=" | "<>" | "LIKE"
value   ::= [0-9]+ | "'" [^'\n]* "'"
order   ::= " ORDER BY " ident (" ASC" | " DESC")?
limit   ::= " LIMIT " [1-9] [0-9]*
ident   ::= [a-z_] [a-z_0-9]*
"""

UNICODE = r"""
root ::= word ( " " word )*
word ::= [α-ωΑ-Ω]+ | [一-龥]+ | [😀-🙏] | "é" [a-z]* | [^\x00-\x7F]{2}
"""

LEFT_RECURSIVE = r"""
root ::= list
list ::= list "," item | item
item ::= "a" | "bb" | item "!"
"""

AMBIGUOUS = r"""
root ::= e
e    ::= e "+" e | e e | "x" | "xy" | "y"
"""

DEEP = r"""
root ::= "(" root ")" | "[" root "]" | "x"
"""

WORDS = [f"w{i:03d}{chr(97 + i % 26)}" for i in range(400)]
LARGE_ALTERNATION = 'root ::= word (" " word)*\nword ::= ' + " | ".join(json.dumps(w) for w in WORDS) + "\n"

BOUNDED = r"""
root ::= [a-z]{2,5} ( "-" [0-9]{1,3} ){0,4} tail{0,3}
tail ::= "." [A-Z]{1,2}
"""

BIG_BOUND = r"""
root ::= "<" [a-c]{0,1000} ">" ( "(" root ")" ){0,2}
"""

JSON_VALUES = [
    {"name": "Bob", "age": 30, "tags": ["a", "b"], "ok": True, "none": None},
    [1, -2.5, 3e10, 'x"y\\z\n\u00e9\u4e2d\U0001f600'],
    {"nested": {"deep": [[[{"k": "v"}]]]}, "empty": {}, "list": []},
    "just a string",
    -0.0,
    12345678901234567890,
]

CASES: list[Case] = [
    Case(
        "json",
        kind="json",
        valid=tuple(json.dumps(v, ensure_ascii=False) for v in JSON_VALUES)
        + tuple(json.dumps(v, indent=2) for v in JSON_VALUES[:3]),
        invalid=('{"a": }', "[1, 2,]", '{"a" 1}', "01", '"\\x"', "[1 2]", "tru", '{"a":1}}'),
    ),
    Case(
        "arithmetic",
        ARITHMETIC,
        valid=("1 + 2 * 3", "(1+2)*3", "-(4.5 / 2) - -3", "((((7))))", "10*20+30/5-1"),
        invalid=("1 +", "(1 + 2", "1 ++ 2", "1.", "()", "1 2"),
    ),
    Case(
        "nested_lists",
        NESTED_LISTS,
        valid=("[]", "[a, b,c]", "[[1, [2, [x]]], []]", "[[[[[[]]]]]]"),
        invalid=("[", "[a,]", "[a b]", "]", "[[]]]"),
    ),
    Case(
        "c_like",
        C_LIKE,
        valid=(
            "int x = 1;",
            "int x = 1;\nwhile (x < 10) { x = x + 1; }",
            "if (a == b) f(1, g(2)); else {\n  int y;\n}",
        ),
        invalid=("int x = ;", "while (x) ", "if (a) {", "f(1,);", "1x = 2;"),
    ),
    Case(
        "sql_like",
        SQL_LIKE,
        valid=(
            "SELECT * FROM users;",
            "SELECT id, name FROM users WHERE age >= 18 AND name LIKE 'B%' ORDER BY name DESC LIMIT 10;",
        ),
        invalid=("SELECT FROM users;", "SELECT * FROM users WHERE;", "SELECT * FROM users LIMIT 0;"),
    ),
    Case(
        "unicode",
        UNICODE,
        valid=("αβγ ΔΩ", "中文字 😀 éte", "ñö", "αβ 中 😂 é"),
        invalid=("abc", "αβ  γ", "中a", "😀a", "é中a"),
    ),
    Case(
        "left_recursive",
        LEFT_RECURSIVE,
        valid=("a", "a,bb,a!!", "bb!,a,a,bb"),
        invalid=(",a", "a,", "b", "a!,,a"),
    ),
    Case(
        "ambiguous",
        AMBIGUOUS,
        valid=("x", "xyx+y", "x+x+x+xy", "xxxxyyy"),
        invalid=("+x", "x+", "z", "x++y"),
    ),
    Case(
        "deep",
        DEEP,
        valid=("x", "(" * 60 + "x" + ")" * 60, "([([x])])"),
        invalid=("(x]", "((x)", "()", "x)"),
    ),
    Case(
        "large_alternation",
        LARGE_ALTERNATION,
        valid=("w000a", "w123t w399j w042q", " ".join(WORDS[::37])),
        invalid=("w400a", "w000b", "w000a  w001b", "w12"),
    ),
    Case(
        "bounded",
        BOUNDED,
        valid=("ab", "abcde-1-22-333-4", "xy.A.BC", "abc-123.Z.Y.X"),
        invalid=("a", "abcdef", "ab-1234", "ab-1-2-3-4-5", "ab.A.B.C.D", "ab.ABC"),
    ),
    Case(
        "big_bound",
        BIG_BOUND,
        valid=("<>", "<" + "abc" * 300 + ">", "<a>(<b>)(<>(<c>))"),
        invalid=("<" + "a" * 1001 + ">", "<d>", "<a>(<b>)(<c>)(<a>)"),
    ),
]
