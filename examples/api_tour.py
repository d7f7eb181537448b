"""The README's API tour, runnable: python examples/api_tour.py"""

from pathlib import Path

import tokensieve as ts

TOKENIZER = (
    Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "hf" / "llama3-128k.tokenizer.json"
)


def main() -> None:
    vocab = ts.Vocabulary.from_tokenizer_json(TOKENIZER)
    compiler = ts.Compiler(vocab)
    grammar = compiler.json_schema(
        {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name", "age"],
        },
    )
    matcher = ts.Matcher(grammar)
    bitmask = ts.allocate_bitmask(1, vocab.size)
    matcher.fill_bitmask(bitmask, row=0)
    allowed = matcher.allowed_tokens()
    example = vocab.token_bytes(int(allowed[0]))
    print(f"{len(allowed)} of {vocab.size} tokens allowed at the start, e.g. {example!r}")
    for piece in [b'{"name": "Bob", ', b'"age": 30}']:
        assert matcher.accept_bytes(piece)
    assert matcher.is_accepting()
    matcher.rollback(1)
    print("forced next:", matcher.jump_forward())


if __name__ == "__main__":
    main()
