"""Hugging Face ``tokenizer.json`` -> :class:`Vocabulary` (standard library only).

A ``tokenizer.json`` stores token *strings*; how a string maps to bytes depends on the
tokenizer family, which is read from the pipeline sections (never from the file name):

- **Byte-level** (a ``ByteLevel`` pre-tokenizer, decoder or normalizer: GPT-2, Llama-3, Qwen,
  DeepSeek, StarCoder, SmolLM2): every character of a vocabulary entry is one byte of GPT-2's
  ``bytes_to_unicode`` alphabet (:mod:`.byte_level`).
- **SentencePiece-style** (a ``Metaspace`` pre-tokenizer/decoder, or a ``Replace`` of ``" "`` by
  ``"▁"``: Llama-2, Mistral, Phi-3): ``"▁"`` stands for a space, and with byte fallback the
  ``<0xNN>`` entries are the single byte ``0xNN`` (they are real bytes, not special tokens).

Added tokens (``added_tokens``) are matched by the tokenizer on the input text itself, so their
bytes are the UTF-8 of their ``content`` (for a ``normalized`` one in a SentencePiece-style
file, with ``"▁"`` read as a space). Note that HF ``decode`` maps byte-level-looking added
tokens through the byte alphabet instead: DeepSeek registers ``"ö"``, ``"ü"``, ... as added
tokens, which the encoder emits for the text ``"ö"`` but ``decode`` turns into the lone byte
``0xF6``. tokensieve follows the encoder (and llama.cpp, which treats them as user-defined
text), so encoding any text and concatenating the token bytes gives that text back.
Added tokens with ``"special": true`` are special; the others are ordinary text (Qwen's
``<tool_call>``).

For SentencePiece-style files the first token of an encoding usually starts with the space
that the normalizer/pre-tokenizer prepends (``"▁Hello"``); those bytes are part of the token
(``b" Hello"``). HF ``decode`` strips that leading space; tokensieve does not.

The file has no EOS field (that lives in ``tokenizer_config.json``), so EOS ids are detected
from the tokens' names (see :func:`._assemble.detect_eos`) unless given.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

from ..errors import TokenizerLoadError
from ._assemble import TokenTable, build_vocabulary
from ._vocabulary import Vocabulary
from .byte_level import decode_byte_level

__all__ = ["load_tokenizer_json", "read_tokenizer_dict", "vocabulary_from_tokenizer_dict"]

_SPACE_MARK = "\u2581"  # "▁", SentencePiece's visible space
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_BYTE_LEVEL = "byte-level"
_SENTENCEPIECE = "sentencepiece"


def load_tokenizer_json(
    path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None = None
) -> Vocabulary:
    """Read ``path`` (a ``tokenizer.json``) into a :class:`Vocabulary`."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise TokenizerLoadError("file not found", path=where) from None
    except OSError as exc:
        raise TokenizerLoadError(f"cannot read the file ({exc.strerror or exc})", path=where) from None
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise TokenizerLoadError(
            f"not UTF-8 text, so not a tokenizer.json ({exc.reason})", path=where
        ) from None
    except json.JSONDecodeError as exc:
        raise TokenizerLoadError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg} (truncated file?)", path=where
        ) from None
    return vocabulary_from_tokenizer_dict(
        data, path=where, name=os.path.basename(where), eos_token_ids=eos_token_ids
    )


def vocabulary_from_tokenizer_dict(
    data: Any,
    *,
    path: str | None = None,
    name: str = "",
    eos_token_ids: Iterable[int] | None = None,
) -> Vocabulary:
    """Build a :class:`Vocabulary` from the parsed JSON of a ``tokenizer.json``."""
    table = read_tokenizer_dict(data, path=path)
    return build_vocabulary(table, path=path, name=name, eos_token_ids=eos_token_ids)


def read_tokenizer_dict(data: Any, *, path: str | None = None) -> TokenTable:
    """The :class:`TokenTable` of a parsed ``tokenizer.json`` (see the module docstring)."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise TokenizerLoadError("not a Hugging Face tokenizer.json (no 'model' object)", path=path)
    model: dict[str, Any] = data["model"]
    family = _family(data, path)
    byte_fallback = bool(model.get("byte_fallback")) or _has_component(data.get("decoder"), "ByteFallback")

    unk = model.get("unk_token")
    table = TokenTable()
    added = _read_added_tokens(data.get("added_tokens", []), family, path, table)
    seen: set[int] = set()
    for token_id, text in _model_vocab(model, path):
        if token_id in seen:
            raise TokenizerLoadError(f"two vocab entries share id {token_id}", path=path)
        seen.add(token_id)
        if text == unk:
            table.special.add(token_id)
        if token_id in added:
            continue  # the added token's own bytes (read above) take precedence
        table.pieces[token_id] = _model_piece(text, token_id, family, byte_fallback, path)
    unk_id = model.get("unk_id")  # Unigram names its unknown token by id
    if isinstance(unk_id, int) and unk_id in table.pieces:
        table.special.add(unk_id)
    return table


# --------------------------------------------------------------------------- family detection


def _family(data: dict[str, Any], path: str | None) -> str:
    sections = [data.get("normalizer"), data.get("pre_tokenizer"), data.get("decoder")]
    byte_level = any(_has_component(section, "ByteLevel") for section in sections)
    sentencepiece = (
        any(_has_component(section, "Metaspace") for section in sections)
        or _has_replace(data.get("decoder"), _SPACE_MARK, " ")
        or _has_replace(data.get("normalizer"), " ", _SPACE_MARK)
    )
    if byte_level and sentencepiece:
        raise TokenizerLoadError(
            "the tokenizer mixes ByteLevel and Metaspace ('▁') components; cannot tell token bytes", path=path
        )
    if byte_level:
        return _BYTE_LEVEL
    if sentencepiece:
        return _SENTENCEPIECE
    raise TokenizerLoadError(
        "neither a byte-level (ByteLevel) nor a SentencePiece-style (Metaspace / '▁') tokenizer, "
        "so its token strings have no fixed bytes",
        path=path,
    )


def _components(section: Any) -> Iterable[dict[str, Any]]:
    """Every component of a pipeline section, descending into ``Sequence`` wrappers."""
    if isinstance(section, dict):
        yield section
        for key in ("normalizers", "pretokenizers", "decoders", "processors"):
            for child in section.get(key) or ():
                yield from _components(child)


def _has_component(section: Any, kind: str) -> bool:
    return any(component.get("type") == kind for component in _components(section))


def _has_replace(section: Any, old: str, new: str) -> bool:
    return any(
        component.get("type") == "Replace"
        and isinstance(component.get("pattern"), dict)
        and component["pattern"].get("String") == old
        and component.get("content") == new
        for component in _components(section)
    )


# --------------------------------------------------------------------------- token strings -> bytes


def _model_vocab(model: dict[str, Any], path: str | None) -> Iterable[tuple[int, str]]:
    """(id, token string) for every entry of the model's own vocabulary."""
    kind = model.get("type")
    vocab = model.get("vocab")
    if kind is None:
        # Files written by old versions of `tokenizers` omit the type of BPE and Unigram models.
        kind = "BPE" if "merges" in model else "Unigram" if isinstance(vocab, list) else None
    if kind in ("WordPiece", "WordLevel"):
        raise TokenizerLoadError(
            f"model type {kind!r} is not supported: its decoder joins tokens with spaces or '##', "
            "so a token has no fixed bytes",
            path=path,
        )
    if kind == "BPE":
        for affix in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(affix):
                raise TokenizerLoadError(
                    f"BPE with {affix}={model[affix]!r} is not supported (token bytes depend on position)",
                    path=path,
                )
        if not isinstance(vocab, dict):
            raise TokenizerLoadError("the BPE model's 'vocab' is not an object of token -> id", path=path)
        for text, token_id in vocab.items():
            if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
                raise TokenizerLoadError(f"vocab entry {text!r} has an invalid id {token_id!r}", path=path)
            yield token_id, text
    elif kind == "Unigram":
        if not isinstance(vocab, list):
            raise TokenizerLoadError("the Unigram model's 'vocab' is not a list of [token, score]", path=path)
        for token_id, entry in enumerate(vocab):
            if not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
                raise TokenizerLoadError(f"Unigram vocab entry {token_id} is not [token, score]", path=path)
            yield token_id, entry[0]
    else:
        raise TokenizerLoadError(f"unknown tokenizer model type {kind!r}", path=path)


def _model_piece(text: str, token_id: int, family: str, byte_fallback: bool, path: str | None) -> bytes:
    if family == _BYTE_LEVEL:
        piece = decode_byte_level(text)
        if piece is None:
            raise TokenizerLoadError(
                f"vocab entry {token_id} ({text!r}) has characters outside the byte-level alphabet",
                path=path,
            )
        return piece
    if byte_fallback:
        byte = _BYTE_TOKEN.fullmatch(text)
        if byte is not None:
            return bytes([int(byte.group(1), 16)])
    return text.replace(_SPACE_MARK, " ").encode("utf-8")


def _read_added_tokens(entries: Any, family: str, path: str | None, table: TokenTable) -> set[int]:
    """Record the added tokens in ``table``; return their ids."""
    if not isinstance(entries, list):
        raise TokenizerLoadError("'added_tokens' is not a list", path=path)
    ids: set[int] = set()
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise TokenizerLoadError(f"malformed added token {entry!r}", path=path)
        token_id = entry.get("id")
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise TokenizerLoadError(
                f"added token {entry['content']!r} has an invalid id {token_id!r}", path=path
            )
        content: str = entry["content"]
        if entry.get("normalized") and family == _SENTENCEPIECE:
            # Matched after the normalizer turned spaces into "▁", so its "▁" stand for spaces.
            content = content.replace(_SPACE_MARK, " ")
        table.pieces[token_id] = content.encode("utf-8")
        table.registered.add(token_id)
        if entry.get("special"):
            table.special.add(token_id)
        ids.add(token_id)
    return ids
