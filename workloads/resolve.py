"""What a workload argument names: a file, or a log of the Parallel Workloads Archive catalogue in the cache.

``batreplay run --workload``, ``batreplay analyze --swf`` (and a campaign's ``workload`` key) take either a path or a catalogue name such as
``KTH-SP2-1996-2.1-cln`` (see :data:`batreplay.workloads.pwa.PWA_CATALOGUE`; ``.swf`` / ``.swf.gz`` suffixes and
any letter case accepted). A name stands for the file ``batreplay fetch NAME`` puts in the cache
(:func:`batreplay.workloads.pwa.cached_path`); it is never downloaded here.
"""

from __future__ import annotations

import os
from pathlib import Path

from batreplay.workloads.loading import WORKLOAD_SUFFIXES
from batreplay.workloads.pwa import PWA_CATALOGUE, ChecksumMismatchError, cached_path, catalogue_entry, file_sha256

#: File endings that mark an argument as a path rather than a bare catalogue name (lower-cased).
_PATH_ENDINGS = (*WORKLOAD_SUFFIXES, ".gz")


def resolve_workload(text: str | Path, *, relative_to: str | Path | None = None,
                     cache_dir: str | Path | None = None, option: str = "--workload") -> Path:
    """The local file a workload argument names.

    Args:
        text: a path (``~`` expanded) or a catalogue name (``KTH-SP2-1996-2.1-cln``, ``kth-sp2-1996-2.1-cln.swf.gz``).
        relative_to: folder a relative path is taken from (a campaign's root); default the current directory.
        cache_dir: folder of fetched logs; default :func:`batreplay.workloads.pwa.default_cache_dir`.
        option: the command-line option ``text`` came from, named in the messages (``"--swf"`` for
            ``batreplay analyze --swf``).

    Returns:
        An existing path as given (joined to ``relative_to`` when relative), else the cached file of the catalogue
        log, verified against the catalogue's sha256 when one is known. Whether the file is a workload the loader
        can read is not checked here.

    Raises:
        FileNotFoundError: no such path, and either a catalogue log not in the cache yet (the message gives the
            ``batreplay fetch`` command, the cache path to copy the file to, and says a local path may be given
            to ``option``) or no catalogue name (the message lists the names when ``text`` does not look like a
            path).
        ChecksumMismatchError: (a ValueError) the cached file differs from the catalogue's; the message says to
            delete it and fetch again.
    """
    given = str(text)
    path = Path(os.path.expanduser(given))
    if relative_to is not None and not path.is_absolute():
        path = Path(relative_to) / path
    if path.exists():
        return path
    entry = catalogue_entry(given)
    if entry is None:
        looks_like_path = "/" in given or "\\" in given or given.lower().endswith(_PATH_ENDINGS)
        if looks_like_path:
            known = catalogue_entry(path.name)
            hint = (f" (the log {known.name} of the Parallel Workloads Archive: `batreplay fetch {known.name}` puts "
                    f"it at {cached_path(known, cache_dir)})") if known else ""
            raise FileNotFoundError(f"workload {path}: no such file{hint}")
        raise FileNotFoundError(f"workload {given!r}: no such file, nor a Parallel Workloads Archive log name "
                                f"(one of {', '.join(sorted(PWA_CATALOGUE))})")
    cached = cached_path(entry, cache_dir)
    if not cached.is_file():
        raise FileNotFoundError(f"workload {entry.name}: not in the cache yet ({cached}); run `batreplay fetch "
                                f"{entry.name}` to download it, or copy the file there, or pass a local path to "
                                f"{option}")
    if entry.sha256 is not None:
        actual = file_sha256(cached)
        if actual != entry.sha256:
            raise ChecksumMismatchError(str(cached), entry.sha256, actual,
                                        f"delete it and run `batreplay fetch {entry.name}` again")
    return cached
