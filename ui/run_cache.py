"""What the app derives from a finished run, kept between requests: the loaded run and the views built from it
(the Gantt chart's rectangles, the utilisation and queue-length steps), so that a zoom or a recolouring redraws
from memory instead of reading and parsing ``out_jobs.csv`` again.

An entry is keyed by the run directory, what was derived and the size and modification time of the files it
comes from (``out_jobs.csv``, ``run.json``, ``jobs.csv``): a run replaced by ``--force`` is read again. The
:data:`MAX_ENTRIES` entries used last are kept (a whole HPC2N run, 202,871 jobs, holds about 100 MB in all).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

#: Entries kept: the derived objects of the runs viewed last (a run and its views are several entries).
MAX_ENTRIES = 12
#: Files of a run directory whose change makes what was derived from it stale.
SOURCE_FILES = ("out_jobs.csv", "run.json", "jobs.csv")


def _stamp(folder: Path) -> tuple:
    """Size and modification time (ns) of each source file of ``folder`` (None for a missing file)."""
    stamp = []
    for name in SOURCE_FILES:
        try:
            status = os.stat(folder / name)
            stamp.append((status.st_size, status.st_mtime_ns))
        except OSError:
            stamp.append(None)
    return tuple(stamp)


class RunCache:
    """A bounded, thread-safe memory of objects derived from run directories (least recently used dropped).

    A request for an entry being built waits for that build instead of building it again (the page of a run
    prepares its views in the background while the browser loads, and the callbacks that draw them wait for them:
    :func:`batreplay.ui.pages.prepare_views`).
    """

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, Any] = OrderedDict()
        self._building: dict[tuple, threading.Event] = {}
        self._lock = threading.Lock()
        #: Entries built (misses), and requests that waited for a build under way, for tests and benchmarks.
        self.builds = 0
        self.waits = 0

    def get(self, folder: Path, what: Hashable, build: Callable[[], Any]) -> Any:
        """The object ``what`` derived from the run directory ``folder``: from memory when its source files are
        unchanged, else ``build()`` (whose exceptions propagate; nothing is kept then), once however many ask at
        the same time."""
        real = os.path.realpath(folder)
        key = (real, what, _stamp(Path(real)))
        while True:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    return self._entries[key]
                underway = self._building.get(key)
                if underway is None:
                    self._building[key] = threading.Event()
                    break
                self.waits += 1
            underway.wait()  # (then from memory, or built here if that build failed)
        try:
            value = build()
            with self._lock:
                self._keep(key, value)
            return value
        finally:
            with self._lock:
                self._building.pop(key).set()

    def _keep(self, key: tuple, value: Any) -> None:
        """Remember ``value`` (the lock held): older versions of the same entry and the least recent beyond
        :attr:`max_entries` are dropped."""
        self.builds += 1
        self._entries[key] = value
        for old in [old for old in self._entries if old[:2] == key[:2] and old != key]:
            del self._entries[old]
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


#: The app's memory of runs (one per process: every page and callback of ``batreplay ui`` shares it).
RUNS = RunCache()
