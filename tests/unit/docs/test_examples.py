"""The README's API tour is a file the suite runs, so the README cannot go stale silently."""

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_api_tour_runs(capsys):
    runpy.run_path(str(ROOT / "examples" / "api_tour.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "tokens allowed at the start" in out
    assert "forced next: b" in out


def test_readme_tour_matches_example():
    readme = (ROOT / "README.md").read_text()
    for line in ("matcher = ts.Matcher(grammar)", "matcher.rollback(1)", "compiler.json_schema("):
        assert line in readme
