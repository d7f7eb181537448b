"""Function calling: the model must call one of the tools in tools.json with valid arguments.

python examples/tool_call.py
"""

import json
from pathlib import Path

import tokensieve as ts

tools = json.loads((Path(__file__).parent / "tools.json").read_text())

result = ts.generate("What's the weather like in Oslo?", tools=tools, tool_choice="required", max_tokens=64)
for call in result.tool_calls or []:
    print(call.name, call.arguments)
