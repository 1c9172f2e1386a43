"""Atomic file writes: a reader sees the old file or the new one, never a half-written one.

Every output of the project (workloads, platforms, session graphs, Batsim output files, manifests) goes
through :func:`write_text_atomically`: the text is written to a temporary file in the destination folder,
flushed to disk, given the permissions a plain ``open()`` would give (or those of the file it replaces),
then renamed over the destination.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
