"""The GPT-2 byte-level alphabet and its inverse.

Byte-level BPE vocabularies (GPT-2, Llama-3, Qwen, DeepSeek, StarCoder, ...) cannot store
arbitrary bytes in their JSON/GGUF token strings, so every byte ``0..255`` is first mapped to
one printable Unicode character by ``bytes_to_unicode`` (printable Latin-1 bytes map to
themselves, the other 68 bytes to ``U+0100..U+0143``). A token string is the concatenation of
those characters; inverting the map gives the token's exact bytes.
"""

from __future__ import annotations

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "decode_byte_level", "encode_byte_level"]


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table, as in ``openai/gpt-2/src/encoder.py`` and HF ``tokenizers``."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            # Bytes that are not printable on their own get consecutive code points from U+0100.
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_CHAR: dict[int, str] = _bytes_to_unicode()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}


def decode_byte_level(token: str) -> bytes | None:
    """The bytes a byte-level token string stands for, or ``None`` if it is not one.

    ``None`` means some character of ``token`` is outside the 256-character alphabet, so the
    string cannot have been produced by the byte-level encoder.
    """
    try:
        return bytes(CHAR_TO_BYTE[c] for c in token)
    except KeyError:
        return None


def encode_byte_level(data: bytes) -> str:
    """The byte-level token string for ``data`` (inverse of :func:`decode_byte_level`)."""
    return "".join(BYTE_TO_CHAR[b] for b in data)
