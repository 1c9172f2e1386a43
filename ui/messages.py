"""How the web GUI states an error: in one line.

A page shows the first line of an error's message (readers and checks of the project already give one line
naming the file, line and field; a traceback or a wrapped message is cut there), prefixed by the error's kind when
the message alone would not say what went wrong (an unexpected exception), or the kind alone for an empty message.
"""

from __future__ import annotations


def one_line(error: BaseException | str | None, *, kind: bool = False, default: str = "") -> str:
    """The first line of ``error`` (an exception or its text).

    Args:
        kind: prefix the exception's class name (``"KeyError: 'x'"``).
        default: the text of an empty message that is not an exception (an exception gives its class name).
    """
    text = str(error) if error is not None else ""
    first = text.strip().splitlines()[0] if text.strip() else ""
    if isinstance(error, BaseException) and (kind or not first):
        return f"{type(error).__name__}: {first}" if first else type(error).__name__
    return first or default
