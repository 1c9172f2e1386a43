"""Walking a Dash layout in tests: every component of a tree, depth first."""

from __future__ import annotations


def components(tree) -> list:
    """Every Dash component of ``tree`` (a component, or a list or tuple of them), ``tree`` itself included,
    depth first."""
    found, stack = [], [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif hasattr(item, "to_plotly_json"):
            found.append(item)
            stack.append(getattr(item, "children", None))
    return found
