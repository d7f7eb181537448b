"""GGUF (llama.cpp) -> :class:`Vocabulary`, via the ``gguf`` package.

A GGUF file stores the vocabulary as metadata: ``tokenizer.ggml.tokens`` (token strings),
``tokenizer.ggml.token_type`` and ``tokenizer.ggml.model``, which says how a string maps to
bytes:

- ``"gpt2"``: byte-level BPE; a normal token's characters are GPT-2 byte-alphabet characters;
- ``"llama"``: SentencePiece; ``"▁"`` in a normal token is a space, and byte tokens
  ``<0xNN>`` are the single byte ``0xNN``.

Token types, as in llama.cpp: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused,
6 byte. Unknown, control and unused tokens are special (their bytes are their text); a
user-defined token is ordinary text, copied verbatim like llama.cpp's ``token_to_piece`` does;
byte tokens are real bytes, not special. EOS ids come from ``tokenizer.ggml.eos_token_id``,
``eot_token_id`` and ``eom_token_id``, plus the end-of-turn markers that
:func:`._assemble.detect_eos` knows (Llama-3's GGUF names only ``<|end_of_text|>`` as EOS,
its instruct models also end on ``<|eot_id|>``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from ..errors import TokenizerLoadError
from ._assemble import TokenTable, build_vocabulary, import_optional
from ._vocabulary import Vocabulary
from .byte_level import decode_byte_level

__all__ = ["load_gguf"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_SPECIAL_TYPES = frozenset({UNKNOWN, CONTROL, UNUSED})
_MODELS = {"gpt2": "byte-level BPE", "llama": "SentencePiece"}
_BYTE_TOKEN = re.compile(rb"<0x([0-9A-Fa-f]{2})>")
_EOS_KEYS = ("eos_token_id", "eot_token_id", "eom_token_id")
_SPECIAL_KEYS = ("bos_token_id", "unknown_token_id")


def load_gguf(path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None = None) -> Vocabulary:
    """Read the vocabulary of the GGUF file ``path`` (see the module docstring)."""
    gguf = import_optional("gguf")
    where = os.fspath(path)
    if not os.path.isfile(where):
        raise TokenizerLoadError("file not found", path=where)
    try:
        reader = gguf.GGUFReader(where, "r")
    except Exception as exc:  # noqa: BLE001 - the parser raises assorted types on corrupt input
        raise TokenizerLoadError(
            f"not a readable GGUF file ({type(exc).__name__}: {exc})", path=where
        ) from None
    fields: dict[str, Any] = reader.fields

    model = _string(fields, "tokenizer.ggml.model", where)
    if model not in _MODELS:
        raise TokenizerLoadError(
            f"unsupported tokenizer model {model!r} (supported: {', '.join(sorted(_MODELS))})", path=where
        )
    texts = _string_array(fields, "tokenizer.ggml.tokens", where)
    if "tokenizer.ggml.token_type" in fields:
        types = _int_array(fields, "tokenizer.ggml.token_type", where)
        if len(types) != len(texts):
            raise TokenizerLoadError(
                f"{len(texts)} tokens but {len(types)} token types", path=where
            )
    else:
        types = [NORMAL] * len(texts)  # llama.cpp's default when the array is absent

    table = TokenTable()
    for token_id, (text, kind) in enumerate(zip(texts, types, strict=True)):
        table.pieces[token_id] = _piece(text, kind, model, token_id, where)
        if kind in _SPECIAL_TYPES:
            table.special.add(token_id)
        if kind != NORMAL and kind != BYTE:
            table.registered.add(token_id)
    for key in _EOS_KEYS + _SPECIAL_KEYS:
        declared = _optional_int(fields, f"tokenizer.ggml.{key}", where)
        if declared is None:
            continue
        if not 0 <= declared < len(texts):
            raise TokenizerLoadError(f"tokenizer.ggml.{key} = {declared} is not a token id", path=where)
        table.special.add(declared)
        if key in _EOS_KEYS:
            table.file_eos.add(declared)
    return build_vocabulary(table, path=where, name=os.path.basename(where), eos_token_ids=eos_token_ids)


def _piece(text: bytes, kind: int, model: str, token_id: int, where: str) -> bytes:
    """The bytes of one token (see the module docstring for the rules)."""
    if kind == BYTE:
        byte = _BYTE_TOKEN.fullmatch(text)
        if byte is None:
            raise TokenizerLoadError(f"byte token {token_id} is {text!r}, not <0xNN>", path=where)
        return bytes([int(byte.group(1), 16)])
    if kind != NORMAL:
        if kind not in (UNKNOWN, CONTROL, USER_DEFINED, UNUSED):
            raise TokenizerLoadError(f"token {token_id} has unknown token type {kind}", path=where)
        return text
    try:
        string = text.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenizerLoadError(f"token {token_id} is not valid UTF-8: {text!r}", path=where) from None
    if model == "gpt2":
        piece = decode_byte_level(string)
        if piece is None:
            raise TokenizerLoadError(
                f"token {token_id} ({string!r}) has characters outside the byte-level alphabet", path=where
            )
        return piece
    return string.replace("\u2581", " ").encode("utf-8")


# --------------------------------------------------------------------------- metadata access
# ReaderField keeps raw numpy parts; ``data`` indexes the parts that hold the values. Reading
# them directly keeps token strings as bytes (``contents()`` would decode, and fail on bad UTF-8).


def _field(fields: dict[str, Any], key: str, where: str) -> Any:
    if key not in fields:
        raise TokenizerLoadError(f"no {key} in the GGUF metadata (not a model/vocab GGUF?)", path=where)
    return fields[key]


def _string(fields: dict[str, Any], key: str, where: str) -> str:
    field = _field(fields, key, where)
    try:
        return field.parts[field.data[0]].tobytes().decode("utf-8")
    except (IndexError, UnicodeDecodeError):
        raise TokenizerLoadError(f"{key} is not a string", path=where) from None


def _string_array(fields: dict[str, Any], key: str, where: str) -> list[bytes]:
    field = _field(fields, key, where)
    return [field.parts[index].tobytes() for index in field.data]


def _int_array(fields: dict[str, Any], key: str, where: str) -> list[int]:
    field = _field(fields, key, where)
    return [int(field.parts[index][0]) for index in field.data]


def _optional_int(fields: dict[str, Any], key: str, where: str) -> int | None:
    if key not in fields:
        return None
    field = fields[key]
    try:
        return int(field.parts[field.data[0]][0])
    except (IndexError, TypeError, ValueError):
        raise TokenizerLoadError(f"{key} is not an integer", path=where) from None
