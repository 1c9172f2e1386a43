"""Atomic file writes: a reader sees the old file or the new one, never a half-written one.

Every output of the project (workloads, platforms, session graphs, Batsim output files, manifests) goes
through :func:`write_text_atomically` (JSON documents through :func:`write_json_atomically`): the text is written to a temporary file in the destination folder,
flushed to disk, given the permissions a plain ``open()`` would give (or those of the file it replaces),
then renamed over the destination.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any


def _new_file_mode(path: Path) -> int:
    """Permissions for ``path``: those of the file it replaces, else what ``open()`` gives (0666 - umask)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically; create parent folders; return the path.

    Raises:
        OSError: on I/O failure; the previous file, if any, is left untouched and the temporary file removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, _new_file_mode(path))  # mkstemp creates the file private (0600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def json_ready(value: Any) -> Any:
    """Plain JSON values: NaN and infinities -> null, numpy scalars -> Python numbers, containers recursively
    (dictionary keys as strings)."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json_atomically(path: str | os.PathLike[str], document: Any, *, indent: int | None = 2) -> Path:
    """Write ``document`` as JSON (through :func:`json_ready`; other objects, such as paths, as strings)
    atomically; return the path.

    Raises:
        OSError: as :func:`write_text_atomically`.
    """
    text = json.dumps(json_ready(document), indent=indent, allow_nan=False, default=str)
    return write_text_atomically(path, text + "\n")
