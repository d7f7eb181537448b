"""tiktoken rank files -> :class:`Vocabulary` (standard library only).

A ``.tiktoken`` file has one ``<base64 token bytes> <rank>`` pair per line; the rank is the
token id. Special tokens are not in the file: pass them as ``special_tokens`` (name -> id),
as tiktoken's ``Encoding(special_tokens=...)`` takes them. Their bytes are their names.

Ids may have gaps: ``o200k_base`` has ranks ``0..199997`` and special tokens at 199999 and
200018. Every id up to the highest one gets an entry, so that ``size == max id + 1`` (the
model's logit width): a missing id becomes the special placeholder ``<|tokensieve_gap_<id>|>``
(see :mod:`._assemble`), which never matches grammar text.

When two names share one id (tiktoken's ``o200k_harmony`` maps both ``<|endofprompt|>`` and
``<|reserved_200018|>`` to 200018), the first name is the token's bytes and every name finds
the id through :meth:`Vocabulary.token_id`.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterable, Mapping

from ..errors import TokenizerLoadError
from ._assemble import TokenTable, build_vocabulary
from ._vocabulary import Vocabulary

__all__ = ["load_tiktoken", "read_ranks"]


def load_tiktoken(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    eos_token_ids: Iterable[int] | None = None,
) -> Vocabulary:
    """Read the rank file ``path`` and add ``special_tokens`` (see the module docstring)."""
    where = os.fspath(path)
    if pattern is not None and (not isinstance(pattern, str) or not pattern):
        raise TypeError("pattern must be a non-empty str (the encoding's pat_str) or None")
    table = TokenTable(pieces=read_ranks(where))
    for name, token_id in (special_tokens or {}).items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"special token names must be non-empty str, got {name!r}")
        if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
            raise TypeError(f"special token {name!r} needs a non-negative int id, got {token_id!r}")
        if token_id in table.special:
            table.names[name] = token_id  # an alias of an earlier special token
            continue
        if token_id in table.pieces:
            raise TokenizerLoadError(
                f"special token {name!r} has id {token_id}, which is already the rank of "
                f"{table.pieces[token_id]!r}",
                path=where,
            )
        table.pieces[token_id] = name.encode("utf-8")
        table.special.add(token_id)
        table.registered.add(token_id)
    return build_vocabulary(
        table,
        path=where,
        name=os.path.basename(where),
        eos_token_ids=eos_token_ids,
        pretokenizer_pattern=pattern,
    )


def read_ranks(path: str) -> dict[int, bytes]:
    """rank -> token bytes of a ``.tiktoken`` file; :class:`TokenizerLoadError` on any bad line."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise TokenizerLoadError("file not found", path=path) from None
    except OSError as exc:
        raise TokenizerLoadError(f"cannot read the file ({exc.strerror or exc})", path=path) from None
    ranks: dict[int, bytes] = {}
    for line_number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            shown = line[:60].decode("utf-8", errors="replace")
            raise TokenizerLoadError(
                f"line {line_number}: expected '<base64 token> <rank>', got {shown!r}", path=path
            )
        encoded, rank_text = (field.decode("ascii", errors="replace") for field in fields)
        try:
            token = base64.b64decode(encoded.encode("ascii", errors="replace"), validate=True)
        except (binascii.Error, ValueError):
            raise TokenizerLoadError(
                f"line {line_number}: invalid base64 {encoded[:60]!r}", path=path
            ) from None
        if not (rank_text.isascii() and rank_text.isdigit()):
            raise TokenizerLoadError(
                f"line {line_number}: rank {rank_text[:20]!r} is not an integer", path=path
            )
        rank = int(rank_text)
        if not token:
            raise TokenizerLoadError(f"line {line_number}: empty token", path=path)
        if rank in ranks:
            raise TokenizerLoadError(f"line {line_number}: rank {rank} appears twice", path=path)
        ranks[rank] = token
    if not ranks:
        raise TokenizerLoadError("no '<base64 token> <rank>' lines (not a tiktoken rank file?)", path=path)
    return ranks
