"""Runs the native C++ tests (cpp/tests/run.sh) as part of the one test command."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build the native tests")
def test_native_dfa_tests(tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", str(ROOT / "cpp" / "tests" / "run.sh")],
        capture_output=True,
        text=True,
        timeout=600,
        env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin:/usr/local/bin"},
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert " 0 failed" in result.stdout
