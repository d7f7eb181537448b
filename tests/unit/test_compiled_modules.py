"""The installed package runs its compile path compiled by mypyc, as the build promises.

The modules are those ``scripts/mypyc_generate.py`` lists. From the development tree
(``PYTHONPATH=src``) every module is plain Python by design, and the check is skipped; an
install built with ``TOKENSIEVE_MYPYC=OFF`` fails it on purpose.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

import tokensieve

ROOT = Path(__file__).resolve().parents[2]


def _listed_modules() -> list[str]:
    spec = importlib.util.spec_from_file_location("mypyc_generate", ROOT / "scripts" / "mypyc_generate.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return [path.removesuffix(".py").replace("/", ".") for path in script.MODULES]


def test_compile_path_modules_are_extension_modules_when_installed() -> None:
    if Path(tokensieve.__file__).resolve().is_relative_to(ROOT / "src"):
        pytest.skip("the development tree runs the compile path as plain Python")
    names = _listed_modules()
    assert "tokensieve.compiler.lower" in names
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    plain = [name for name in names if not str(importlib.import_module(name).__file__).endswith(suffixes)]
    assert not plain, f"not compiled by mypyc: {plain}"
