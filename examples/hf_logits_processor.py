"""Constrain Hugging Face ``model.generate`` itself: one schema per batch row.

python examples/hf_logits_processor.py
"""

import json

from transformers import LogitsProcessorList

from tokensieve.integrations.transformers import TokensieveLogitsProcessor, load_backend

backend = load_backend()  # the embedded SmolLM2-135M-Instruct, loaded offline
model, tokenizer = backend.model, backend.tokenizer

schemas = [
    {"type": "object", "properties": {"color": {"enum": ["red", "green", "blue"]}}, "required": ["color"]},
    {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
]
grammars = [backend.compiler.json_schema(s, whitespace="compact") for s in schemas]
prompts = ["What color is the sky? Answer in JSON.", "Give two numbers as a JSON array."]

texts = [
    tokenizer.apply_chat_template(
        [{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True
    )
    for p in prompts
]
tokenizer.padding_side = "left"
inputs = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
output = model.generate(
    **inputs,
    logits_processor=LogitsProcessorList([TokensieveLogitsProcessor(grammars)]),
    max_new_tokens=24,
    do_sample=False,
    pad_token_id=tokenizer.eos_token_id,
)
for row in output[:, inputs["input_ids"].shape[1] :]:
    text = tokenizer.decode(row, skip_special_tokens=True)
    print(text, "->", json.loads(text))
