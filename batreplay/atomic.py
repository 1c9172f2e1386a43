"""Atomic file and directory writes: a reader sees the old file or the new one, never a half-written one.

Every output of the project (workloads, platforms, session graphs, Batsim output files, manifests) goes
through :func:`write_text_atomically` (JSON documents through :func:`write_json_atomically`): the text is written to a temporary file in the destination folder,
flushed to disk, given the permissions a plain ``open()`` would give (or those of the file it replaces),
then renamed over the destination.

Directories (run directories, campaign instances) are written the same way, with this protocol:

- **Staging** (:func:`make_staging_directory`): the directory is written in a hidden sibling
  ``.NAME.HOST-PID-RANDOM.tmp`` (HOST: 8 hex digits of a hash of the host name; PID: the writing process),
  created with the permissions of a plain ``mkdir`` (0777 minus the umask; :func:`tempfile.mkdtemp`'s 0700
  would hide results from the group on a shared file system).
- **Commit** (:func:`commit_directory`): when ``NAME`` does not exist, one ``rename(staging, NAME)``.
  When it exists and may be replaced:

  1. on Linux, ``renameat2(staging, NAME, RENAME_EXCHANGE)`` swaps both in one atomic step: ``NAME`` holds
     the old directory, then the new one, never nothing; the staging name now holds the old directory,
     which is removed (step 4);
  2. where the exchange is not supported (another system, some network file systems):
     ``rename(NAME, .NAME.HOST-PID-RANDOM.old)``, then ``rename(staging, NAME)`` (if this second rename
     fails, the first is undone at once), then step 4 on the ``.old``;
  3. (an error at any step leaves ``NAME`` as it was, old or new, and the staging directory is removed by
     the caller);
  4. the discarded directory is renamed ``.NAME.HOST-PID-RANDOM.trash`` and deleted.

- **Recovery** (:func:`recover_interrupted`, called by every run before it writes in a folder): leftovers of
  processes of this host that no longer run are handled by kind. A ``.tmp`` is removed (a staging directory,
  or after step 1 the old directory already replaced). A ``.old`` whose ``NAME`` is missing (killed between
  the two renames of step 2) is renamed back to ``NAME``: the previous directory returns; a ``.old`` whose
  ``NAME`` exists (killed before step 4) is removed. A ``.trash`` (killed during step 4) is removed. The
  renames are atomic, so a ``.old`` is always complete, and a partly deleted directory is always a
  ``.trash``. Leftovers of a live process (another run writing in the same folder at the same time), of
  another host (the same folder on a shared file system) or not named by this protocol are never touched.

A kill at any moment thus leaves ``NAME`` holding the old directory or the new one; only in the two-rename
fallback, between its two renames, is ``NAME`` briefly absent on disk, and the next run in that folder
puts the old directory back.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import json
import math
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO


def _new_file_mode(path: Path) -> int:
    """Permissions for ``path``: those of the file it replaces, else what ``open()`` gives (0666 - umask)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o666 & ~current_umask()


def current_umask() -> int:
    """The process's umask (Linux: read from ``/proc/self/status``, which leaves it untouched for other
    threads; elsewhere set and restored at once)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def write_text_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically; create parent folders; return the path.

    Raises:
        OSError: on I/O failure; the previous file, if any, is left untouched and the temporary file removed.
    """
    with open_text_atomically(path) as stream:
        stream.write(text)
    return Path(path)


@contextlib.contextmanager
def open_text_atomically(path: str | os.PathLike[str], *, buffering: int = -1) -> Iterator[TextIO]:
    """A text stream (UTF-8, ``\\n`` line ends) to write ``path`` atomically, piece by piece: it goes to a temporary
    file beside ``path`` (parent folders are created), renamed over ``path`` when the block ends without an error,
    with the permissions of the file it replaces (else those ``open()`` would give).

    Raises:
        OSError: on I/O failure; whatever the block raises. Either way the previous file, if any, is left untouched
            and the temporary file removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=buffering) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, _new_file_mode(path))  # mkstemp creates the file private (0600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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


# --- directories ------------------------------------------------------------------------------------------------

#: Hidden siblings written by the directory protocol (see the module docstring): name, host, pid, kind.
_LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-[a-z0-9_]+\.(?P<kind>tmp|old|trash)")
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _host_id() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def process_alive(pid: int) -> bool:
    """True when process ``pid`` exists and is not a zombie (Linux: state read from ``/proc/<pid>/stat``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def make_staging_directory(target: str | os.PathLike[str]) -> Path:
    """Create the hidden staging sibling of ``target`` (``.NAME.HOST-PID-RANDOM.tmp``, parent folders
    created), with the permissions a plain ``mkdir`` gives (0777 minus the umask); return its path.

    Raises:
        OSError: the folder cannot be written.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{_host_id()}-{os.getpid()}-",
                                    suffix=".tmp"))
    os.chmod(staging, 0o777 & ~current_umask())
    return staging


@functools.cache
def _renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no such C library function (old glibc, another libc)
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _exchange_directories(first: Path, second: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux ``renameat2`` with ``RENAME_EXCHANGE``); False when
    the system or the file system does not support it (nothing done then).

    Raises:
        OSError: the exchange is supported but failed.
    """
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(first), None, os.fspath(second))


def _sibling(staging: Path, kind: str) -> Path:
    return staging.with_name(staging.name[: -len(".tmp")] + "." + kind)


def _discard(path: Path) -> None:
    """Rename ``path`` (a staging name holding a replaced directory, or a ``.old``) to ``.trash``, then delete
    it. Failures are left to :func:`recover_interrupted`: the new directory is already in place."""
    trash = path.with_name(path.name.rsplit(".", 1)[0] + ".trash")
    try:
        os.rename(path, trash)
        shutil.rmtree(trash)
    except OSError:
        pass


def commit_directory(staging: str | os.PathLike[str], target: str | os.PathLike[str], *,
                     replace: bool = False) -> None:
    """Move the complete directory ``staging`` (from :func:`make_staging_directory`) to ``target``; with
    ``replace``, an existing ``target`` directory is replaced atomically (protocol in the module docstring).

    Raises:
        FileExistsError: ``target`` exists and ``replace`` is false.
        NotADirectoryError: ``target`` exists and is not a directory (or is a symbolic link).
        OSError: a rename failed; ``target`` is then as it was and ``staging`` still exists.
    """
    staging, target = Path(staging), Path(target)
    if not os.path.lexists(target):
        os.rename(staging, target)
        return
    if not replace:
        raise FileExistsError(errno.EEXIST, "already exists", os.fspath(target))
    if target.is_symlink() or not target.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", os.fspath(target))
    if _exchange_directories(staging, target):
        _discard(staging)  # the staging name now holds the replaced directory
        return
    old = _sibling(staging, "old")
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(old, target)
        raise
    _discard(old)


def recover_interrupted(folder: str | os.PathLike[str]) -> list[str]:
    """Clean what killed processes of this host left in ``folder`` by the directory protocol (see the module
    docstring): remove their staging and discarded directories, put back a directory whose replacement
    was interrupted. Never touches anything of a live process, of another host, or not named by the
    protocol. Errors (a leftover that cannot be removed) are ignored: it is tried again next time.

    Returns:
        One line per directory put back and one summing up the removed leftovers (empty: nothing found).
    """
    folder = Path(folder)
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    host, notes, removed = _host_id(), [], []
    for entry in entries:
        match = _LEFTOVER.fullmatch(entry.name)
        if (match is None or match["host"] != host or int(match["pid"]) == os.getpid()
                or process_alive(int(match["pid"])) or not entry.is_dir(follow_symlinks=False)):
            continue
        path = Path(entry.path)
        if match["kind"] == "old":
            target = folder / match["name"]
            if not os.path.lexists(target):
                try:
                    os.rename(path, target)
                    notes.append(f"put back {target}: its replacement by an earlier run was interrupted")
                    continue
                except OSError:
                    pass
            _discard(path)
        else:
            shutil.rmtree(path, ignore_errors=True)
        removed.append(entry.name)
    if removed:
        notes.append(f"removed {len(removed)} leftover(s) of interrupted runs in {folder}: {', '.join(removed)}")
    return notes
