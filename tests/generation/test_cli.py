"""The command line: the main job (``tokensieve generate --schema ...``) and ``tokensieve check``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from tokensieve.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_main_job_prints_valid_json_for_the_example_schema(backend, capsys) -> None:
    # ``backend`` loads the embedded model once; the CLI reuses the same cached backend.
    status = main(
        ["generate", "--schema", str(EXAMPLES / "person.json"), "Extract: Bob is 30 and lives in Paris"]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    value = json.loads(out)
    jsonschema.validate(value, json.loads((EXAMPLES / "person.json").read_text()))
    assert value["name"] == "Bob" and value["age"] == 30
    assert "tokens/s" in err and "stop: " in err


def test_generate_with_a_grammar_file_and_truncation(backend, capsys) -> None:
    status = main(
        ["generate", "--grammar", str(EXAMPLES / "answer.gbnf"), "--max-tokens", "24", "Is water wet?"]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    assert re.fullmatch(r"(yes|no), because [a-z ]{1,40}\.", out.strip()), out
    status = main(["generate", "--schema", str(EXAMPLES / "person.json"), "--max-tokens", "2", "Bob is 30."])
    out, err = capsys.readouterr()
    assert status == 1 and "max_tokens=2" in err and out.strip()


def test_generate_with_tools(backend, capsys) -> None:
    status = main(
        [
            "generate",
            "--tools",
            str(EXAMPLES / "tools.json"),
            "--tool-choice",
            "required",
            "--whitespace",
            "compact",
            "--max-tokens",
            "40",
            "What is the weather in Oslo?",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    call = json.loads(out)
    assert call["name"] in ("get_weather", "add") and isinstance(call["arguments"], dict)


def test_check_prints_statistics(capsys) -> None:
    assert main(["check", "--schema", str(EXAMPLES / "person.json")]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("ok: schema compiled") and "DFA states" in out and "first mask" in out


def test_check_reports_the_location_of_errors(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.gbnf"
    bad.write_text('root ::= "a" |\n  foo\n')
    assert main(["check", "--grammar", str(bad)]) == 1
    assert f"{bad}:2:3:" in capsys.readouterr().err
    assert main(["check", "--regex", "[0-9]{3}-(a"]) == 1
    assert "regex:1:" in capsys.readouterr().err
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object", "properties": {"a": {"not": {"type": "string"}, "pattern": "("}}}')
    assert main(["check", "--schema", str(schema)]) == 1
    assert str(schema) in capsys.readouterr().err


def test_usage_errors(tmp_path: Path, capsys) -> None:
    assert main([]) == 2
    assert main(["check", "--regex", "a", "--json"]) == 1
    assert "exactly one" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert main(["check", "--schema", str(broken)]) == 1
    assert "not valid JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["generate"])  # the prompt is required
