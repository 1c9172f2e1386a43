"""Which files the web GUI may touch: its runs directory and the folders the user named when starting it.

Every parameter of the app that names a file (a workload, a platform, a node-types table, a scheduler file, a
speedup table in the scheduler options, a folder of session graphs, a campaign file and the files it names) goes
through :meth:`Sandbox.resolve` or :meth:`Sandbox.contains` before anything opens it (run ids in URLs name
folders of the runs directory only: :func:`batreplay.ui.run_index.run_directory`). A path is refused, with a
one-line message naming the parameter, when it

- climbs out with ``..`` components (even when it would land back inside);
- is absolute and outside every allowed folder;
- reaches outside every allowed folder through a symbolic link (the real path is checked, not the text);
- does not exist (or is not a file / a directory when one is required);
- is longer than :data:`MAX_PATH_CHARS` or holds a NUL character.

A path outside the allowed folders gets the same message whether it exists or not: whether it is inside is decided
on its real path (the links on its way followed, also for a file that does not exist) before anything asks whether
it exists, so the app never tells which files exist elsewhere. Only what is inside is told apart: missing, not a
file, not a directory.

Relative paths are taken relative to the first allowed folder that holds them, in the order the folders were
given. The runs directory is always allowed: the app writes only there (uploads, generated platforms, run
directories).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath


#: Longest path the app looks up (Linux's PATH_MAX): a longer text is refused before any file is touched.
MAX_PATH_CHARS = 4096


def _under(path: Path, folder: Path) -> bool:
    """True when ``path`` is ``folder`` or inside it (both real paths)."""
    return path == folder or path.is_relative_to(folder)


class SandboxError(ValueError):
    """A path the app may not use; the message names the parameter and says why, in one line."""


class Sandbox:
    """The folders the app may read (``allowed``) and the one it writes (``runs_dir``, allowed too).

    Args:
        runs_dir: where runs, uploads and generated platforms go (created if missing).
        allowed: other folders whose files may be read (workloads, platforms, scheduler files).

    Raises:
        SandboxError: an allowed folder that does not exist or is not a directory.
    """

    def __init__(self, runs_dir: str | os.PathLike[str], allowed: Sequence[str | os.PathLike[str]] = ()) -> None:
        runs = Path(runs_dir)
        runs.mkdir(parents=True, exist_ok=True)
        self.runs_dir = runs.resolve()
        roots = [self.runs_dir]
        for folder in allowed:
            path = Path(folder)
            if not path.is_dir():
                raise SandboxError(f"--allow {folder}: not a directory")
            if path.resolve() not in roots:
                roots.append(path.resolve())
        self.roots: tuple[Path, ...] = tuple(roots)

    def contains(self, path: Path) -> bool:
        """True when the real path of ``path`` (symbolic links followed, also those on the way to a file that does
        not exist) is inside an allowed folder."""
        real = Path(os.path.realpath(path))
        return any(_under(real, root) for root in self.roots)

    def _outside(self, what: str, text: str) -> SandboxError:
        return SandboxError(f"{what}: {text} is outside the folders this app may read ({self.describe_roots()})")

    def resolve(self, text: str, what: str, *, kind: str = "file") -> Path:
        """The allowed path that ``text`` names, for the parameter ``what`` (used in messages).

        Args:
            text: a path as typed or sent by the browser: relative (to an allowed folder) or absolute.
            what: the parameter's name, for the message (``workload``, ``platform``...).
            kind: ``file`` or ``dir`` (what must exist there).

        Returns:
            The absolute path with symbolic links resolved.

        Raises:
            SandboxError: see the module docstring.
        """
        text = (text or "").strip()
        if not text:
            raise SandboxError(f"{what}: no path given")
        if len(text) > MAX_PATH_CHARS:
            raise SandboxError(f"{what}: a path of {len(text):,} characters is too long "
                               f"(at most {MAX_PATH_CHARS:,}): name a file inside the allowed folders")
        if "\x00" in text:
            raise SandboxError(f"{what}: {text!r} is not a valid path")
        if ".." in PurePosixPath(text).parts or ".." in Path(text).parts:
            raise SandboxError(f"{what}: {text!r} contains '..': name a file inside the allowed folders")
        given = Path(text)
        candidates = [given] if given.is_absolute() else [root / given for root in self.roots]
        for candidate in candidates:
            if not self.contains(candidate):  # (decided before asking whether it exists)
                raise self._outside(what, text)
            if not os.path.lexists(candidate):
                continue
            real = Path(os.path.realpath(candidate))
            if kind == "file" and not real.is_file():
                raise SandboxError(f"{what}: {text} is not a file")
            if kind == "dir" and not real.is_dir():
                raise SandboxError(f"{what}: {text} is not a directory")
            return real
        raise SandboxError(f"{what}: {text} not found in the folders this app may read ({self.describe_roots()})")

    def shown(self, path: Path) -> str:
        """``path`` as the app shows it: relative to the allowed folder holding it, prefixed by that folder's
        name (``workloads/KTH-SP2.swf.gz``); as given when no folder holds it."""
        for root in self.roots:
            if path == root or path.is_relative_to(root):
                return str(Path(root.name) / path.relative_to(root))
        return str(path)

    def describe_roots(self) -> str:
        """The allowed folders, for messages."""
        return ", ".join(str(root) for root in self.roots)

    def files(self, suffixes: Sequence[str], *, depth: int = 2, accept: Callable[[Path], bool] | None = None,
              own: Sequence[str] = ()) -> list[Path]:
        """Files under the allowed folders whose names end with one of ``suffixes``, at most ``depth`` folders
        down, sorted; hidden files and folders and files reached through links that leave the folders are
        skipped.

        Args:
            accept: a closer test of each file so named (a peek at its contents), or None (its name is enough).
            own: the subfolders of the runs folder whose files may be listed (``uploads``): the rest of the runs
                folder is the app's own output (run directories, failure records, generated platforms,
                campaigns) and is never listed, even under an allowed folder that holds the runs folder.
        """
        keep = [self.runs_dir / name for name in own]

        def wanted(real: Path, folder: bool) -> bool:
            """Whether a file (or a folder to walk: ``folder``) of real path ``real`` may be listed."""
            if not _under(real, self.runs_dir):
                return True
            return any(_under(real, kept) or (folder and _under(kept, real)) for kept in keep)

        found: set[Path] = set()
        for root in self.roots:
            for folder, subfolders, names in os.walk(root):
                level = len(Path(folder).relative_to(root).parts)
                subfolders[:] = sorted(name for name in subfolders if not name.startswith(".")
                                       and wanted(Path(os.path.realpath(Path(folder) / name)), True)
                                       ) if level < depth else []
                for name in names:
                    path = Path(folder) / name
                    if (not name.startswith(".") and name.endswith(tuple(suffixes)) and self.contains(path)
                            and wanted(Path(os.path.realpath(path)), False) and (accept is None or accept(path))):
                        found.add(path)
        return sorted(found)
