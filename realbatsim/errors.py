"""What can go wrong next to a real Batsim, and what Batsim's standard error says about it.

All errors derive from :class:`BatsimLaunchError`, a :class:`RuntimeError` (the command line prints them as
one-line errors); their first line says what to do. When Batsim stopped, the message quotes the reason Batsim gave
(its last CRITICAL or ERROR log line) or the last lines of its standard error, and names the file where that log
stays. This module imports only the standard library.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path


class BatsimLaunchError(RuntimeError):
    """Batsim could not be found, started, or did not finish a simulation properly."""


class BatsimNotFound(BatsimLaunchError):
    """No usable ``batsim`` executable (not on PATH, or the given path is not an executable file)."""


class BatsimVersionError(BatsimLaunchError):
    """``batsim --version`` failed, could not be read, or names a release outside the supported series."""


class BatsimCrashed(BatsimLaunchError):
    """Batsim exited with a non-zero status, was killed by a signal, or exited before the simulation ended.

    Attributes:
        exit_status: Batsim's exit status (negative: killed by that signal number), to propagate.
        stderr_tail: the last lines of Batsim's standard error.
    """

    def __init__(self, message: str, exit_status: int | None, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.exit_status = exit_status
        self.stderr_tail = stderr_tail


class BatsimTimeout(BatsimLaunchError):
    """Batsim stopped answering: it did not connect, stayed silent, or did not exit in time."""


class BatsimNoOutput(BatsimLaunchError):
    """Batsim exited with status 0 but did not write its output files."""


class BatsimProtocolError(BatsimLaunchError):
    """Batsim sent something that is not a protocol message (not JSON, or no ``now``/``events``)."""


def crashed(status: int, when: str, stderr_log: Path | None) -> BatsimCrashed:
    """The error for a Batsim that exited with ``status`` (negative: killed by that signal) ``when`` (``"after
    the simulation ended"``...): Batsim's own reason when its standard error gives one, its last lines otherwise."""
    if status < 0:
        try:
            how = f"was killed by signal {signal.Signals(-status).name}"
        except ValueError:
            how = f"was killed by signal {-status}"
    else:
        how = f"exited with status {status}"
    tail = stderr_tail(stderr_log)
    reason = _batsim_reason(stderr_log)
    if reason:  # Batsim said why (an xbt CRITICAL log line before its abort): that line is the message
        return BatsimCrashed(f"batsim {how} {when}: {reason}; see {stderr_log}", status, tail)
    return BatsimCrashed(f"batsim {how} {when}; see {stderr_log}" + quoted_tail(tail), status, tail)


#: Batsim's (SimGrid xbt) log lines that say why it stopped: ``[time] file:line: [category/CRITICAL] text``.
_BATSIM_REASON = re.compile(r"\[(?:[\w.]+/)?(?:CRITICAL|ERROR)\]\s*(.+)$")


def _batsim_reason(path: Path | None, max_bytes: int = 65536) -> str:
    """The text of the last CRITICAL or ERROR line of Batsim's standard error ("" if none), without its
    time stamp and source location: what Batsim says when it refuses its inputs and aborts (SIGABRT)."""
    text = _last_bytes(path, max_bytes)
    reasons = [m.group(1).strip() for m in map(_BATSIM_REASON.search, text.splitlines()) if m]
    return reasons[-1] if reasons else ""


def _last_bytes(path: Path | None, max_bytes: int) -> str:
    """The end of the file ``path`` (at most ``max_bytes``, decoded leniently); "" without such a file."""
    if path is None or not path.is_file():
        return ""
    with open(path, "rb") as stream:
        stream.seek(max(path.stat().st_size - max_bytes, 0))
        return stream.read().decode("utf-8", errors="replace")


def stderr_tail(path: Path | None, lines: int = 10, max_bytes: int = 8192) -> str:
    """The last ``lines`` non-blank lines of the file ``path`` (Batsim's standard error); "" without it."""
    kept = [line.rstrip() for line in _last_bytes(path, max_bytes).splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def quoted_tail(tail: str) -> str:
    """``tail`` (from :func:`stderr_tail`) as the indented end of an error message; "" when it is empty."""
    return "" if not tail else "\nlast lines of batsim's standard error:\n" + "\n".join(
        f"  {line}" for line in tail.splitlines())


def last_line(text: str) -> str:
    """The last non-blank line of ``text``, stripped and cut at 200 characters ("" if none)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
