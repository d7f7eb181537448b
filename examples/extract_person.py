"""Extract structured data with the Python API: a JSON Schema in, a validated dict out.

Run from the repository root (offline; uses the embedded SmolLM2-135M-Instruct):

    python examples/extract_person.py
"""

import json
from pathlib import Path

import tokensieve as ts

schema = json.loads((Path(__file__).parent / "person.json").read_text())

result = ts.generate("Extract: Alice is 41 and lives in Berlin.", schema=schema, max_tokens=64)
print(result.value)  # a dict that matches the schema
print(f"{result.completion_tokens} tokens, {result.tokens_per_s:.1f} tokens/s, stop: {result.stop_reason}")

# A batch: one matcher per row, rows decoded together.
for row in ts.generate(["Bob is 30, from Paris.", "Chen, 25, Shanghai."], schema=schema, max_tokens=64):
    print(row.value, row.validation_errors or "valid")
