"""The :class:`Vocabulary`: token id -> exact bytes, special tokens and EOS ids.

A vocabulary is immutable. It knows nothing about how text is split into tokens (that is the
tokenizer's job); the grammar engine only needs, for every id the model can emit, the bytes
that id appends to the output, which ids are special (never match grammar text) and which ids
end generation.

The loaders live in sibling modules (one per file format) and are imported lazily by the
``from_*`` class methods, so ``import tokensieve`` never pulls in ``gguf`` or ``transformers``.
"""

from __future__ import annotations

import hashlib
import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import TokenizerLoadError, VocabularyMismatch

__all__ = ["Vocabulary"]

# Bumped whenever the fingerprint's byte layout changes, so old cache keys can never collide.
_FINGERPRINT_VERSION = b"tokensieve-vocabulary-v1\0"


class Vocabulary:
    """The exact bytes of every token id of a model, plus its special and EOS ids.

    ``tokens[i]`` is what id ``i`` appends to the output. For special tokens (BOS, EOS,
    padding, control and chat markers) it is their textual form, e.g. ``b"<|eot_id|>"``;
    those ids never match grammar text and are only allowed where the grammar asks for them
    (EOS at the end). Every EOS id is special, whether or not it was listed as such.

    Build one with a loader (:meth:`from_tokenizer_json`, :meth:`from_huggingface`,
    :meth:`from_gguf`, :meth:`from_tiktoken`, :meth:`from_sentencepiece`) or directly::

        vocab = Vocabulary([b"a", b"b", b"</s>"], eos_token_ids=[2])

    Raises :class:`~tokensieve.errors.TokenizerLoadError` for malformed token data and
    :class:`~tokensieve.errors.VocabularyMismatch` for an EOS/special id outside the vocabulary.
    """

    __slots__ = (
        "_byte_index",
        "_declared_special",
        "_eos",
        "_extra_names",
        "_fingerprint",
        "_name",
        "_special",
        "_special_names",
        "_pretokenizer_pattern",
        "_tokens",
    )

    def __init__(
        self,
        tokens: Sequence[bytes],
        *,
        eos_token_ids: Iterable[int] = (),
        special_token_ids: Iterable[int] = (),
        name: str = "",
        special_token_names: Mapping[str, int] | None = None,
        pretokenizer_pattern: str | None = None,
    ) -> None:
        """Check and freeze the token table.

        ``special_token_names`` maps extra textual names to special ids for :meth:`token_id`
        (a loader uses it when two names share one id, as in tiktoken's ``o200k_harmony``);
        the text of every special token is always a name of its id. ``pretokenizer_pattern``
        is kept as :attr:`pretokenizer_pattern`.
        """
        if isinstance(tokens, (bytes, str)):
            raise TypeError("tokens must be a sequence of bytes objects, one per token id")
        frozen: list[bytes] = []
        for token_id, token in enumerate(tokens):
            if not isinstance(token, (bytes, bytearray, memoryview)):
                raise TokenizerLoadError(
                    f"token {token_id} is {type(token).__name__}, expected bytes (the token's exact bytes)"
                )
            frozen.append(bytes(token))
        if not frozen:
            raise TokenizerLoadError("a vocabulary needs at least one token")
        self._tokens: tuple[bytes, ...] = tuple(frozen)
        self._name = str(name)
        self._declared_special = frozenset(self._check_ids(special_token_ids, "special token id"))
        self._eos: tuple[int, ...] = tuple(sorted(set(self._check_ids(eos_token_ids, "EOS token id"))))
        self._special = self._declared_special | frozenset(self._eos)
        for token_id, token in enumerate(self._tokens):
            if not token and token_id not in self._special:
                # An empty ordinary token would let the matcher accept output that never advances.
                raise TokenizerLoadError(
                    f"token {token_id} has no bytes; an empty token must be listed as special"
                )
        self._extra_names = dict(special_token_names or {})
        self._special_names = self._build_special_names(self._extra_names)
        self._byte_index: dict[bytes, int] | None = None
        self._fingerprint: str | None = None
        if pretokenizer_pattern is not None and not isinstance(pretokenizer_pattern, str):
            raise TypeError("pretokenizer_pattern must be a str (a regular expression) or None")
        self._pretokenizer_pattern = pretokenizer_pattern

    # ------------------------------------------------------------------ basic properties

    @property
    def size(self) -> int:
        """The number of token ids (``len(tokens)``); the width of the model's logits."""
        return len(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def tokens(self) -> tuple[bytes, ...]:
        """The exact bytes of every id, in id order."""
        return self._tokens

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        """The ids that end generation, ascending."""
        return self._eos

    @property
    def special_token_ids(self) -> frozenset[int]:
        """Ids that never match grammar text: EOS, BOS, padding, control tokens, chat markers."""
        return self._special

    @property
    def name(self) -> str:
        """A label for messages and reprs (usually the file name); not part of the fingerprint."""
        return self._name

    @property
    def pretokenizer_pattern(self) -> str | None:
        """The pre-tokenizer regex a tiktoken encoding was loaded with (``None`` otherwise).

        Token bytes do not depend on it; it is kept for code that must encode text.
        """
        return self._pretokenizer_pattern

    def token_bytes(self, token_id: int) -> bytes:
        """The exact bytes of ``token_id``; :class:`VocabularyMismatch` if it is out of range."""
        return self._tokens[self._check_id(token_id, "token id")]

    def is_special(self, token_id: int) -> bool:
        """Whether ``token_id`` is special (see :attr:`special_token_ids`)."""
        return self._check_id(token_id, "token id") in self._special

    def token_id(self, text: str | bytes) -> int | None:
        """The id whose token is exactly ``text``, or ``None``.

        A ``str`` is first looked up as a special-token name (``"<|eot_id|>"``), then as the
        UTF-8 bytes of an ordinary token. ``bytes`` are looked up among ordinary tokens first,
        then among the textual forms of special tokens. When several ids share the same bytes
        (a SentencePiece ``"▁"`` and its ``<0x20>`` byte token), the lowest id wins.
        """
        if isinstance(text, str):
            special = self._special_names.get(text)
            if special is not None:
                return special
            return self._lookup_bytes().get(text.encode("utf-8"))
        if isinstance(text, (bytes, bytearray, memoryview)):
            data = bytes(text)
            found = self._lookup_bytes().get(data)
            if found is not None:
                return found
            try:
                return self._special_names.get(data.decode("utf-8"))
            except UnicodeDecodeError:
                return None
        raise TypeError(f"token_id() takes str or bytes, not {type(text).__name__}")

    # ------------------------------------------------------------------ identity

    @property
    def fingerprint(self) -> str:
        """A stable sha256 (hex) of the tokens, the special flags and the EOS ids.

        Two vocabularies have the same fingerprint exactly when they behave the same for
        grammar compilation, so it is the cache key for compiled grammars. The name is not
        part of it.
        """
        if self._fingerprint is None:
            digest = hashlib.sha256(_FINGERPRINT_VERSION)
            digest.update(len(self._tokens).to_bytes(8, "little"))
            for token in self._tokens:
                # Length-prefixed, so token boundaries are unambiguous (tokens may hold NUL bytes).
                digest.update(len(token).to_bytes(4, "little"))
                digest.update(token)
            for label, ids in ((b"special", sorted(self._special)), (b"eos", self._eos)):
                digest.update(label + len(ids).to_bytes(8, "little"))
                for token_id in ids:
                    digest.update(token_id.to_bytes(8, "little"))
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return (
            self._tokens == other._tokens
            and self._special == other._special
            and self._eos == other._eos
        )

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        label = f"name={self._name!r}, " if self._name else ""
        return f"Vocabulary({label}size={self.size}, eos_token_ids={self._eos})"

    # ------------------------------------------------------------------ derived vocabularies

    def with_eos(self, eos_token_ids: Iterable[int]) -> Vocabulary:
        """A copy whose EOS ids are exactly ``eos_token_ids`` (e.g. add an end-of-turn token).

        Ids that were special only because they were EOS become ordinary again; ids that were
        declared special (control tokens) stay special.
        """
        eos = list(eos_token_ids)
        still_special = self._declared_special.union(eos)
        return Vocabulary(
            self._tokens,
            eos_token_ids=eos,
            special_token_ids=self._declared_special,
            name=self._name,
            # Extra names of ids that stop being special are dropped with their special flag.
            special_token_names={n: i for n, i in self._extra_names.items() if i in still_special},
            pretokenizer_pattern=self._pretokenizer_pattern,
        )

    # ------------------------------------------------------------------ loaders

    @classmethod
    def from_tokenizer_json(
        cls, path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None = None
    ) -> Vocabulary:
        """Load a Hugging Face ``tokenizer.json`` (byte-level BPE or SentencePiece-style).

        Needs only the standard library. EOS ids are detected from the special tokens unless
        ``eos_token_ids`` is given; see :mod:`tokensieve.vocabulary.hf_json`.
        """
        from .hf_json import load_tokenizer_json

        return load_tokenizer_json(path, eos_token_ids=eos_token_ids)

    @classmethod
    def from_huggingface(cls, tokenizer: Any, *, eos_token_ids: Iterable[int] | None = None) -> Vocabulary:
        """Build from a ``tokenizers.Tokenizer`` or a ``transformers`` tokenizer object."""
        from .huggingface import vocabulary_from_huggingface

        return vocabulary_from_huggingface(tokenizer, eos_token_ids=eos_token_ids)

    @classmethod
    def from_gguf(
        cls, path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None = None
    ) -> Vocabulary:
        """Load the vocabulary stored in a GGUF file (needs the ``gguf`` package)."""
        from .gguf_loader import load_gguf

        return load_gguf(path, eos_token_ids=eos_token_ids)

    @classmethod
    def from_tiktoken(
        cls,
        path: str | os.PathLike[str],
        *,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
        eos_token_ids: Iterable[int] | None = None,
    ) -> Vocabulary:
        """Load a tiktoken rank file (``base64-token rank`` per line) plus its special tokens.

        ``pattern`` is the encoding's pre-tokenizer regex (``pat_str``); token bytes do not
        depend on it, it is kept as :attr:`pretokenizer_pattern` for code that must encode text.
        Ids missing from both the ranks and ``special_tokens`` are filled with placeholder
        special tokens; see :mod:`tokensieve.vocabulary.tiktoken_loader`.
        """
        from .tiktoken_loader import load_tiktoken

        return load_tiktoken(
            path, pattern=pattern, special_tokens=special_tokens, eos_token_ids=eos_token_ids
        )

    @classmethod
    def from_sentencepiece(
        cls, path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None = None
    ) -> Vocabulary:
        """Load a SentencePiece ``.model`` file (needs the ``sentencepiece`` package)."""
        from .sentencepiece_loader import load_sentencepiece

        return load_sentencepiece(path, eos_token_ids=eos_token_ids)

    # ------------------------------------------------------------------ helpers

    def _check_id(self, token_id: object, what: str) -> int:
        if isinstance(token_id, bool):
            raise TypeError(f"{what} must be an int, not bool")
        try:
            # operator.index also accepts numpy integers, but not floats.
            index = operator.index(token_id)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(f"{what} must be an int, not {type(token_id).__name__}") from None
        if not 0 <= index < len(self._tokens):
            raise VocabularyMismatch(
                f"{what} {index} is outside the vocabulary (ids 0..{len(self._tokens) - 1})"
            )
        return index

    def _check_ids(self, ids: Iterable[int], what: str) -> list[int]:
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"{what}s must be an iterable of ints")
        return [self._check_id(token_id, what) for token_id in ids]

    def _build_special_names(self, extra: Mapping[str, int]) -> dict[str, int]:
        names: dict[str, int] = {}
        for token_id in sorted(self._special):
            try:
                text = self._tokens[token_id].decode("utf-8")
            except UnicodeDecodeError:
                continue
            names.setdefault(text, token_id)
        for text, token_id in extra.items():
            checked = self._check_id(token_id, "special token id")
            if checked not in self._special:
                raise TokenizerLoadError(
                    f"special token name {text!r} names id {checked}, which is not special"
                )
            names.setdefault(text, checked)
        return names

    def _lookup_bytes(self) -> dict[bytes, int]:
        if self._byte_index is None:
            index: dict[bytes, int] = {}
            for token_id, token in enumerate(self._tokens):
                if token_id not in self._special:
                    index.setdefault(token, token_id)
            self._byte_index = index
        return self._byte_index
