"""Token vocabularies: the exact bytes of every token id, special tokens and EOS ids.

:class:`Vocabulary` is the only public name; build one from a tokenizer file with its
``from_*`` class methods. One module per file format (code map, in reading order):

- ``_vocabulary``: the :class:`Vocabulary` class itself;
- ``_assemble``: rules every loader shares (EOS detection, gap placeholders, padding ids);
- ``byte_level``: GPT-2's byte <-> character alphabet of byte-level BPE vocabularies;
- ``hf_json``: Hugging Face ``tokenizer.json``; ``huggingface``: live tokenizer objects;
- ``gguf_loader``: GGUF files (llama.cpp); ``tiktoken_loader``: tiktoken rank files;
- ``sentencepiece_loader``: SentencePiece ``.model`` files.
"""

from __future__ import annotations

from ._vocabulary import Vocabulary

__all__ = ["Vocabulary"]
