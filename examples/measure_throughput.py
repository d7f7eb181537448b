"""Tokens per second with and without constraints, and how much mask time the overlap hides.

    python examples/measure_throughput.py [--tokens 64] [--repeats 3]

Each configuration decodes greedily from the same prompt and stops where it stops (EOS,
end of the grammar, or ``--tokens``), so rates are per decoded token. Reported: decode
tokens/s (the prefill and the token it yields are excluded), forward passes, mask time per
token, and the fraction of mask time overlapped with the forward pass. Jump-forward adds
tokens without forward passes, so it can push the constrained rate above the free one.
"""

import argparse
import json
import statistics
from pathlib import Path

from tokensieve.generation import generate, resolve_backend

parser = argparse.ArgumentParser()
parser.add_argument("--tokens", type=int, default=64)
parser.add_argument("--repeats", type=int, default=3)
args = parser.parse_args()

backend = resolve_backend()
schema = json.loads((Path(__file__).parent / "person.json").read_text())
prompt = "Extract: Bob is 30 and lives in Paris. Then describe Bob at length."
configs = {
    "unconstrained": dict(),
    "schema, no overlap, no jump-forward": dict(schema=schema, overlap=False, jump_forward=False),
    "schema, overlap": dict(schema=schema, jump_forward=False),
    "schema, overlap + jump-forward": dict(schema=schema, whitespace="compact"),
}
generate(prompt, backend=backend, max_tokens=4)  # warm up kernels and caches

print(f"{'configuration':40} {'tok/s':>7} {'tokens':>6} {'passes':>6} {'mask/tok':>9} {'overlap':>8}")
for name, extra in configs.items():
    rates, results = [], []
    for _ in range(args.repeats):
        r = generate(
            prompt,
            backend=backend,
            system="Reply with JSON only.",
            max_tokens=args.tokens,
            on_truncate="return",
            **extra,
        )
        decode_s = r.timings.total_s - r.timings.prefill_s
        rates.append((r.completion_tokens - 1) / decode_s if decode_s > 0 else 0.0)
        results.append(r)
    r = results[-1]
    per_token = r.timings.mask_s / max(1, r.completion_tokens) * 1e6
    print(
        f"{name:40} {statistics.median(rates):7.1f} {r.completion_tokens:6d} {r.timings.forward_passes:6d} "
        f"{per_token:7.0f}us {r.timings.overlap:8.0%}"
    )
