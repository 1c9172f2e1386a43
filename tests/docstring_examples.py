"""Running the code examples of module docstrings, so that a documented extension is also a tested one."""

from __future__ import annotations

import textwrap
import types


def docstring_example(module: types.ModuleType, first_line: str, end: str, name: str) -> types.ModuleType:
    """The example of ``module``'s docstring from the line holding ``first_line`` to the text ``end``
    (excluded), dedented and executed as a new module called ``name``.

    Raises:
        ValueError: ``first_line`` or ``end`` is not in the docstring (the documentation changed).
    """
    text = module.__doc__ or ""
    start = text.rindex("\n", 0, text.index(first_line)) + 1
    block = text[start:text.index(end, start)]
    example = types.ModuleType(name)
    exec(compile(textwrap.dedent(block), f"<docstring of {module.__name__}>", "exec"), example.__dict__)
    return example
