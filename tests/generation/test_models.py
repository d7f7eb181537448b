"""Locating models: the embedded default and user paths (never a download)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokensieve.models import DEFAULT_MODEL_FILE, ModelLocation, default_model_path, locate_model


def test_default_model_is_found_without_importing_its_package() -> None:
    try:
        path = default_model_path()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    assert path.name == DEFAULT_MODEL_FILE and path.stat().st_size > 50_000_000
    assert locate_model(None) == ModelLocation(path.parent, path.name)


def test_gguf_file_and_folders(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert locate_model(gguf) == ModelLocation(tmp_path, "m.gguf")
    assert locate_model(tmp_path) == ModelLocation(tmp_path, "m.gguf")  # the only GGUF in the folder
    (tmp_path / "config.json").write_text("{}")
    assert locate_model(str(tmp_path)) == ModelLocation(tmp_path)  # a checkpoint folder wins
    assert locate_model(str(tmp_path)).path == tmp_path


def test_bad_model_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="never downloads"):
        locate_model("HuggingFaceTB/SmolLM2-135M-Instruct")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="must be a .gguf"):
        locate_model(tmp_path / "notes.txt")
    with pytest.raises(ValueError, match="neither"):
        locate_model(tmp_path)
    (tmp_path / "a.gguf").write_bytes(b"")
    (tmp_path / "b.gguf").write_bytes(b"")
    with pytest.raises(ValueError, match="several GGUF"):
        locate_model(tmp_path)
