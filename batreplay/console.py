"""The console the commands print on (rich), set up once for every entry point.

On a terminal, rich wraps long lines at the terminal's width and draws progress bars. When the output is a file or
a pipe (``batreplay run ... > log``, a cluster job, CI), each message must stay on one line so that it greps:
:func:`make_console` then turns soft wrapping on (rich adds no line breaks). Progress bars draw nothing there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported by make_console, once a command runs (not for --help or argument errors)
    from rich.console import Console


def make_console(*, stderr: bool = False) -> Console:
    """A rich console on standard output (or standard error with ``stderr``), soft-wrapped when it is not a
    terminal (see the module docstring)."""
    from rich.console import Console

    console = Console(stderr=stderr)
    if not console.is_terminal:
        console.soft_wrap = True
    return console
