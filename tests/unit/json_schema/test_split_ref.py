"""``split_ref``: the shortcut for fragment-only references gives urllib's answer."""

from __future__ import annotations

from urllib.parse import unquote, urldefrag

from hypothesis import given
from hypothesis import strategies as st

from tokensieve.frontends.json_schema.refs import ROOT_URI, join_uri, split_ref


def _by_urllib(base: str, ref: str) -> tuple[str, str]:
    uri, fragment = urldefrag(join_uri(base, ref))
    return uri, unquote(fragment)


_BASES = st.sampled_from(
    [
        ROOT_URI,
        "https://example.test/schemas/a.json",
        "https://example.test/dir/",
        "urn:example:root",
        "https://example.test/a?b=1",
        "https://example.test/a?",
        "  https://example.test/spaced",
        "https://example.test/has#fragment",
        "",
    ]
)
# Pointers and anchors with the characters that matter to urllib: escapes, "%", "#", "?",
# tabs and line breaks (which urllib drops), non-ASCII.
_FRAGMENTS = st.text(alphabet=st.sampled_from(list("/az~01%2F#?\t\n\r é$")), max_size=20)


@given(base=_BASES, fragment=_FRAGMENTS)
def test_fragment_only_references_resolve_as_urllib_resolves_them(base: str, fragment: str) -> None:
    assert split_ref(base, "#" + fragment) == _by_urllib(base, "#" + fragment)


@given(base=_BASES, ref=st.sampled_from(["other.json#/a", "/abs#x", "urn:x:y#/z", "", "b/c.json", "?q#f"]))
def test_other_references_resolve_as_urllib_resolves_them(base: str, ref: str) -> None:
    assert split_ref(base, ref) == _by_urllib(base, ref)


def test_common_pointer() -> None:
    assert split_ref(ROOT_URI, "#/definitions/a%20b") == (ROOT_URI, "/definitions/a b")
