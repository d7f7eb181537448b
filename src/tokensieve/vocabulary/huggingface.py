"""Live Hugging Face tokenizer objects -> :class:`Vocabulary`.

Accepted objects, checked by what they offer (no import of ``transformers`` is needed, the
caller already has the object):

- a ``tokenizers.Tokenizer``: its JSON (``to_str()``) is read exactly like a
  ``tokenizer.json`` file, so the result equals :meth:`Vocabulary.from_tokenizer_json`;
- a ``transformers`` fast tokenizer (it has ``backend_tokenizer``): the same, plus what the
  ``transformers`` object knows on top of the JSON: its ``eos_token_id`` is EOS and its
  ``all_special_ids`` are special;
- a ``transformers`` slow SentencePiece tokenizer (it has ``sp_model``): the SentencePiece
  pieces, plus its ``added_tokens_decoder`` entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..errors import TokenizerLoadError
from ._assemble import TokenTable, build_vocabulary
from ._vocabulary import Vocabulary
from .hf_json import read_tokenizer_dict
from .sentencepiece_loader import table_from_processor

__all__ = ["vocabulary_from_huggingface"]


def vocabulary_from_huggingface(tokenizer: Any, *, eos_token_ids: Iterable[int] | None = None) -> Vocabulary:
    """Build a :class:`Vocabulary` from a tokenizer object (see the module docstring)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None and _is_tokenizers_object(tokenizer):
        backend = tokenizer
    if backend is not None:
        table = read_tokenizer_dict(json.loads(backend.to_str()))
    elif getattr(tokenizer, "sp_model", None) is not None:
        table = table_from_processor(tokenizer.sp_model, None)
    else:
        raise TokenizerLoadError(
            f"cannot read a vocabulary from a {type(tokenizer).__name__}: expected a tokenizers.Tokenizer, "
            "a transformers fast tokenizer or a SentencePiece-based transformers tokenizer"
        )
    if backend is not tokenizer:
        # A fast tokenizer's added tokens are already in its backend's JSON.
        _add_transformers_metadata(tokenizer, table, added_tokens=backend is None)
    name = getattr(tokenizer, "name_or_path", "") or ""
    return build_vocabulary(table, path=None, name=str(name), eos_token_ids=eos_token_ids)


def _is_tokenizers_object(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "tokenizers" and callable(getattr(obj, "to_str", None))


def _add_transformers_metadata(tokenizer: Any, table: TokenTable, *, added_tokens: bool) -> None:
    """Fold in special ids, the EOS id and (if asked) the added tokens of a ``transformers`` tokenizer."""
    added_decoder = getattr(tokenizer, "added_tokens_decoder", None) if added_tokens else None
    for token_id, added in (added_decoder or {}).items():
        content = getattr(added, "content", None)
        if not isinstance(content, str):
            continue
        table.pieces[int(token_id)] = content.encode("utf-8")
        table.registered.add(int(token_id))
        if getattr(added, "special", False):
            table.special.add(int(token_id))
    table.special.update(int(i) for i in getattr(tokenizer, "all_special_ids", None) or ())
    eos = getattr(tokenizer, "eos_token_id", None)
    if isinstance(eos, int):
        table.file_eos.add(eos)
