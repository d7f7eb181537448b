"""SentencePiece ``.model`` files -> :class:`Vocabulary`, via the ``sentencepiece`` package.

Piece kinds map as in GGUF: ``"▁"`` in a normal (or user-defined) piece is a space; byte
pieces ``<0xNN>`` are the single byte ``0xNN`` and are not special; control, unknown and
unused pieces are special, with their text as bytes. EOS is the model's ``eos_id`` (plus the
end-of-turn markers :func:`._assemble.detect_eos` knows).

SentencePiece adds a "dummy prefix" space to the input (``"Hello"`` is encoded as
``"▁Hello"``), so the bytes of an encoding are the *normalized* text with ``"▁"`` read as a
space (``b" Hello"``); ``decode`` drops that first space again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from ..errors import TokenizerLoadError
from ._assemble import TokenTable, build_vocabulary, import_optional
from ._vocabulary import Vocabulary

__all__ = ["load_sentencepiece", "table_from_processor"]

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def load_sentencepiece(
    path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None = None
) -> Vocabulary:
    """Read the SentencePiece model file ``path`` (see the module docstring)."""
    sentencepiece = import_optional("sentencepiece", extra="")
    where = os.fspath(path)
    if not os.path.isfile(where):
        raise TokenizerLoadError("file not found", path=where)
    try:
        processor = sentencepiece.SentencePieceProcessor(model_file=where)
    except (RuntimeError, OSError) as exc:
        raise TokenizerLoadError(f"not a SentencePiece model ({exc})", path=where) from None
    table = table_from_processor(processor, where)
    return build_vocabulary(table, path=where, name=os.path.basename(where), eos_token_ids=eos_token_ids)


def table_from_processor(processor: Any, where: str | None) -> TokenTable:
    """The :class:`TokenTable` of a loaded ``sentencepiece.SentencePieceProcessor``."""
    table = TokenTable()
    special_kinds = (processor.is_control, processor.is_unknown, processor.is_unused)
    for token_id in range(processor.get_piece_size()):
        piece: str = processor.id_to_piece(token_id)
        if processor.is_byte(token_id):
            byte = _BYTE_PIECE.fullmatch(piece)
            if byte is None:
                raise TokenizerLoadError(f"byte piece {token_id} is {piece!r}, not <0xNN>", path=where)
            table.pieces[token_id] = bytes([int(byte.group(1), 16)])
        elif any(is_kind(token_id) for is_kind in special_kinds):
            table.pieces[token_id] = piece.encode("utf-8")
            table.special.add(token_id)
            table.registered.add(token_id)
        else:
            table.pieces[token_id] = piece.replace("\u2581", " ").encode("utf-8")
    # Ids the model declares; -1 means "none".
    for token_id in (processor.bos_id(), processor.eos_id(), processor.unk_id(), processor.pad_id()):
        if token_id >= 0:
            table.special.add(token_id)
    if processor.eos_id() >= 0:
        table.file_eos.add(processor.eos_id())
    return table
