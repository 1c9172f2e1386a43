"""Reading a TOML input file (node types, job types) with one-line errors that name the file."""

from __future__ import annotations

import tomllib
from pathlib import Path


def read_toml_file(path: str | Path, what: str, error: type[Exception]) -> dict:
    """The document of the TOML file ``path``, a ``what`` file (``node types``, ``job types``) for the messages.

    Raises:
        error: no such file, a file that cannot be read or is not UTF-8, or not valid TOML (line and column); the
            message starts with the file's path.
    """
    path = Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such {what} file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise error(f"{path}: cannot read it ({err})") from None
    except tomllib.TOMLDecodeError as err:
        raise error(f"{path}: not valid TOML: {err}") from None
