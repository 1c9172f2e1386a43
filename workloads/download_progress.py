"""A rich progress bar for downloads, behind pooch's progress-bar protocol.

pooch's downloaders (:class:`pooch.HTTPDownloader`, :class:`pooch.FTPDownloader`) accept any object with a settable
``total`` (bytes; 0 when the server does not say), ``update(n)`` (n more bytes), ``reset()`` and ``close()``: they set
``total``, call ``update`` once per chunk (with the chunk size, so the last call may overshoot), then ``reset()``,
``update(total)`` and ``close()``. :class:`RichDownloadBar` draws that as a :class:`rich.progress.Progress` bar with
bytes done and total, transfer speed and time left.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)


class RichDownloadBar:
    """pooch's progress-bar protocol drawn with rich: ``<label> [bar] 1.2/4.1 MB 3.0 MB/s 0:00:01``.

    Args:
        console: where to draw; nothing is drawn when it is not a terminal (output piped to a file or CI).
        label: text before the bar, e.g. the file name.

    Attributes:
        completed: bytes counted so far (never above ``total`` when the size is known).
        closed: True once :meth:`close` ran (it may run more than once).
    """

    def __init__(self, console: Console, label: str) -> None:
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                  TransferSpeedColumn(), TimeRemainingColumn(), console=console,
                                  disable=not console.is_terminal)
        self._label = label
        self._task: Any = None
        self._total = 0
        self.completed = 0
        self.closed = False

    @property
    def total(self) -> int:
        """Size of the download, bytes (0: unknown)."""
        return self._total

    @total.setter
    def total(self, value: int) -> None:
        self._total = int(value or 0)
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=self._total or None)
        else:
            self._progress.update(self._task, total=self._total or None)

    def update(self, n: int) -> None:
        """Count ``n`` more bytes (clipped to ``total`` when it is known)."""
        self.completed += int(n)
        if self._total:
            self.completed = min(self.completed, self._total)
        if self._task is not None:
            self._progress.update(self._task, completed=self.completed)

    def reset(self) -> None:
        """Back to 0 bytes, as pooch does before its final ``update(total)``; kept as is when the size is unknown
        (pooch's final ``update(0)`` would otherwise show 0 bytes)."""
        if self._total:
            self.completed = 0

    def close(self) -> None:
        """Stop drawing (the finished bar stays on screen)."""
        if not self.closed:
            self.closed = True
            self._progress.stop()


def download_bar(progress: bool | Console | Any, label: str) -> Any:
    """The progress bar :func:`batreplay.workloads.pwa.fetch_log` hands to pooch for its ``progress`` argument:
    None for False/None, a :class:`RichDownloadBar` on standard error for True or on the given console, and any
    other object (already following pooch's protocol) as is."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return RichDownloadBar(Console(stderr=True), label)
    if isinstance(progress, Console):
        return RichDownloadBar(progress, label)
    return progress
