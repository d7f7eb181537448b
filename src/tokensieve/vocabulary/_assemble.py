"""What every loader shares: the raw token table, EOS detection and gap filling.

A loader reads its file format into a :class:`TokenTable` (id -> bytes, which ids are special,
which ids the file itself names as EOS) and hands it to :func:`build_vocabulary`, which applies
the same rules for every format:

- **Gaps.** Ids that the file does not define (tiktoken encodings leave holes between the
  ranks and the special tokens) get the placeholder special token ``<|tokensieve_gap_<id>|>``,
  so that ``size == max id + 1`` and every id the model can emit has an entry. A placeholder is
  special, so it never matches grammar text.
- **Padding placeholders.** Converters that pad a vocabulary to the model's logit width
  (llama.cpp, ``transformers``' GGUF converter) name those ids ``[PAD<id>]`` and register them
  as ordinary added tokens; they are not real tokens, so they are made special too.
- **EOS.** See :func:`detect_eos`. Explicit ``eos_token_ids`` from the caller replace the
  detection; if neither yields an id, loading fails with a "missing EOS" error.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType

from ..errors import TokenizerLoadError
from ._vocabulary import Vocabulary

__all__ = [
    "END_OF_TEXT_NAMES",
    "END_OF_TURN_NAMES",
    "TokenTable",
    "build_vocabulary",
    "detect_eos",
    "gap_placeholder",
    "import_optional",
]

# Markers that end a chat turn or a tool call. They are EOS whenever the file registers them
# as a token of their own (added / user-defined / special), even without the special flag:
# the DeepSeek-Coder vocabulary, converted from GGUF, lost that flag on ``<|EOT|>``.
END_OF_TURN_NAMES: frozenset[str] = frozenset(
    {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<|EOT|>", "<|return|>", "<|call|>"}
)

# Markers that end a document. They are EOS only when flagged special: Phi-3 keeps ``</s>``
# as an ordinary added token (it also reads as an HTML closing tag) and ends with ``<|end|>``.
END_OF_TEXT_NAMES: frozenset[str] = frozenset(
    {"<|end_of_text|>", "<|endoftext|>", "</s>", "<｜end▁of▁sentence｜>"}
)

_PADDING = re.compile(rb"\[PAD(\d+)\]")


def gap_placeholder(token_id: int) -> bytes:
    """The textual form given to an id that the tokenizer file leaves undefined."""
    return b"<|tokensieve_gap_%d|>" % token_id


@dataclass
class TokenTable:
    """A tokenizer file's tokens, as a loader read them, before the shared rules apply.

    ``registered`` holds ids the file lists as tokens of their own rather than as vocabulary
    entries (HF added tokens, GGUF control/user-defined tokens, tiktoken special tokens).
    ``file_eos`` holds EOS ids the file states explicitly (GGUF ``eos_token_id``).
    ``names`` maps extra special-token names to ids (tiktoken aliases).
    """

    pieces: dict[int, bytes] = field(default_factory=dict)
    special: set[int] = field(default_factory=set)
    registered: set[int] = field(default_factory=set)
    file_eos: set[int] = field(default_factory=set)
    names: dict[str, int] = field(default_factory=dict)


def detect_eos(table: TokenTable) -> set[int]:
    """The EOS ids of a token table: the file's own plus well-known markers.

    1. Ids the file names as EOS (``table.file_eos``).
    2. Registered tokens spelling an end-of-turn marker (:data:`END_OF_TURN_NAMES`).
    3. Special tokens spelling an end-of-text marker (:data:`END_OF_TEXT_NAMES`), except one
       at id 0 when step 2 found a marker: StarCoder-lineage vocabularies keep
       ``<|endoftext|>`` at id 0 as the base model's catch-all BOS/UNK/PAD, and their chat
       models (SmolLM2-Instruct) stop on ``<|im_end|>`` alone. Pass ``eos_token_ids`` (or use
       :meth:`Vocabulary.with_eos`) for the base model.
    """
    turn: set[int] = set()
    text: set[int] = set()
    for token_id in table.registered | table.special:
        piece = table.pieces.get(token_id)
        if piece is None:
            continue
        try:
            name = piece.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if name in END_OF_TURN_NAMES:
            turn.add(token_id)
        elif name in END_OF_TEXT_NAMES and token_id in table.special:
            text.add(token_id)
    if turn:
        text.discard(0)
    return set(table.file_eos) | turn | text


def build_vocabulary(
    table: TokenTable,
    *,
    path: str | os.PathLike[str] | None,
    name: str,
    eos_token_ids: Iterable[int] | None,
    pretokenizer_pattern: str | None = None,
) -> Vocabulary:
    """Apply the shared rules (module docstring) and construct the :class:`Vocabulary`."""
    where = os.fspath(path) if path is not None else None
    if not table.pieces:
        raise TokenizerLoadError("the file defines no tokens", path=where)
    if min(table.pieces) < 0:
        raise TokenizerLoadError(f"negative token id {min(table.pieces)}", path=where)
    size = max(table.pieces) + 1
    tokens: list[bytes] = []
    special = set(table.special)
    for token_id in range(size):
        piece = table.pieces.get(token_id)
        if piece is None:
            piece = gap_placeholder(token_id)
            special.add(token_id)
        else:
            padding = _PADDING.fullmatch(piece)
            if padding is not None and int(padding.group(1)) == token_id:
                special.add(token_id)
        tokens.append(piece)
    if eos_token_ids is None:
        eos = detect_eos(table)
        if not eos:
            raise TokenizerLoadError(
                "no EOS token found (no end-of-sequence id in the file's metadata and no special "
                f"token named like {sorted(END_OF_TEXT_NAMES | END_OF_TURN_NAMES)}); "
                "pass eos_token_ids=[...]",
                path=where,
            )
    else:
        eos = set(_checked_ids(eos_token_ids, size, where))
    return Vocabulary(
        tokens,
        eos_token_ids=sorted(eos),
        special_token_ids=special,
        name=name,
        special_token_names=table.names,
        pretokenizer_pattern=pretokenizer_pattern,
    )


def _checked_ids(ids: Iterable[int], size: int, where: str | None) -> list[int]:
    if isinstance(ids, (str, bytes)):
        raise TypeError("eos_token_ids must be an iterable of ints")
    out = list(ids)
    if not out:
        raise TokenizerLoadError("eos_token_ids is empty; a vocabulary needs at least one EOS id", path=where)
    for token_id in out:
        if isinstance(token_id, int) and not isinstance(token_id, bool) and not 0 <= token_id < size:
            raise TokenizerLoadError(
                f"eos_token_ids contains {token_id}, outside the vocabulary (ids 0..{size - 1})",
                path=where,
            )
    return out


def import_optional(module: str, extra: str = "tokenizers") -> ModuleType:
    """Import an optional dependency, or raise an ImportError that says what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = f"pip install tokensieve[{extra}]" if extra else f"pip install {module}"
        raise ImportError(f"this loader needs the {module!r} package: {hint}") from exc

