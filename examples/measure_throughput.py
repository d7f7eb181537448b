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

# Configurations take turns within each repeat, so a change in machine load hits them all alike.
runs: dict[str, list] = {name: [] for name in configs}
for _ in range(args.repeats):
    for name, extra in configs.items():
        runs[name].append(
            generate(
                prompt,
                backend=backend,
                system="Reply with JSON only.",
                max_tokens=args.tokens,
                on_truncate="return",
                **extra,
            )
        )


def decode_rate(r) -> float:
    """Tokens per second after the prefill (the prefill's own token excluded)."""
    decode_s = r.timings.total_s - r.timings.prefill_s
    return (r.completion_tokens - 1) / decode_s if decode_s > 0 else 0.0


print(f"{'configuration':40} {'tok/s':>7} {'tokens':>6} {'passes':>6} {'mask/tok':>9} {'overlap':>8}")
for name, results in runs.items():
    r = results[-1]
    mask_per_token = statistics.median(x.timings.mask_s / max(1, x.completion_tokens) for x in results) * 1e6
    overlap = statistics.median(x.timings.overlap for x in results)
    print(
        f"{name:40} {statistics.median(decode_rate(x) for x in results):7.1f} {r.completion_tokens:6d} "
        f"{r.timings.forward_passes:6d} {mask_per_token:7.0f}us {overlap:8.0%}"
    )
