"""``property_order="any"`` on objects with many properties, through the native engine.

The oracle expands any-order objects into 2^n rules, so it only checks small objects
(``test_objects_arrays.py``); here the engine's set tracking is checked on objects far
beyond that, against ``jsonschema`` on random member orders.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from tokensieve.compiler import Compiler
from tokensieve.matcher import Matcher
from tokensieve.vocabulary import Vocabulary

BYTES = Vocabulary(
    [bytes([b]) for b in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256]
)

N = 40
SCHEMA = {
    "type": "object",
    "properties": {f"p{i}": {"type": "integer"} if i % 2 else {"type": "string"} for i in range(N)},
    "required": [f"p{i}" for i in range(0, N, 7)],
    "additionalProperties": {"type": "boolean"},
    "maxProperties": 30,
}


@pytest.fixture(scope="module")
def compiled():  # type: ignore[no-untyped-def]
    return Compiler(BYTES).json_schema(SCHEMA, property_order="any")


def accepts(compiled, text: str) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return m.accept_bytes(text.encode()) and m.is_accepting()


def random_object(rng: random.Random) -> dict[str, object]:
    names = set(rng.sample(range(N), rng.randint(0, 26)))
    if rng.random() < 0.8:  # usually every required property
        names |= set(range(0, N, 7))
    obj: dict[str, object] = {f"p{i}": (i if i % 2 else "s") for i in names}
    for k in range(rng.randint(0, 3)):
        obj[f"x{k}"] = rng.random() < 0.5
    if rng.random() < 0.1:  # a wrong value type
        obj[f"p{rng.randrange(N)}"] = None
    items = list(obj.items())
    rng.shuffle(items)
    return dict(items)


def test_random_orders_agree_with_jsonschema(compiled) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(300):
        obj = random_object(rng)
        valid = jsonschema.Draft202012Validator(SCHEMA).is_valid(obj)
        seen[valid] += 1
        for text in (json.dumps(obj), json.dumps(obj, indent=2)):
            assert accepts(compiled, text) == valid, text
    assert min(seen.values()) > 20  # both outcomes are exercised


def test_each_declared_property_at_most_once(compiled) -> None:  # type: ignore[no-untyped-def]
    base = {f"p{i}": (i if i % 2 else "s") for i in range(0, N, 7)}
    text = json.dumps(base)
    assert accepts(compiled, text)
    assert not accepts(compiled, text[:-1] + ', "p14": "again"}')
    assert accepts(compiled, text[:-1] + ', "x": true, "y": false}')


def test_required_and_count_bounds_shape_the_mask(compiled) -> None:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    assert m.accept_bytes(b'{"p0": "s"')
    allowed = {bytes([t]) for t in m.allowed_tokens().tolist() if t < 256}
    assert b"," in allowed and b"}" not in allowed  # p7, p14... are still required
