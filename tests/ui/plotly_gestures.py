"""A user's gestures on the web GUI's Plotly graphs, in a Playwright page: wait for a view, drag a box zoom, hover
over a drawn job; and the size of what the server answers. Shared by the browser tests and
``benchmarks/bench_ui_gantt.py``.

Graphs are addressed by their Dash id (``"gantt"``); times are simulated seconds, converted to the axis' unit
with the figure's ``layout.meta.seconds_per_unit``.
"""

from __future__ import annotations

import time


def plot(graph: str) -> str:
    """The JavaScript expression of the Plotly element of the Dash graph ``graph``."""
    return f"document.querySelector('#{graph} .js-plotly-plot')"


def wait_meta(page, graph: str, condition: str, timeout_s: float) -> float:
    """Seconds until the graph's ``layout.meta`` satisfies the JavaScript ``condition`` (on ``meta``)."""
    started = time.perf_counter()
    page.wait_for_function(f"(() => {{ const g = {plot(graph)}; const meta = g && g.layout && g.layout.meta; "
                           f"return meta && ({condition}); }})()", timeout=timeout_s * 1000)
    return time.perf_counter() - started


def meta(page, graph: str) -> dict:
    """The graph's ``layout.meta`` as drawn in the browser."""
    return page.evaluate(f"{plot(graph)}.layout.meta")


def box_zoom(page, graph: str, start_s: float, end_s: float) -> None:
    """Drag the mouse across the graph from ``start_s`` to ``end_s`` (simulated s) at mid-height, as a user zooms
    in time (every host kept).

    Raises:
        ValueError: the drag would be under 10 pixels wide (Plotly ignores it): zoom in in steps.
    """
    box = page.evaluate(f"""(() => {{ const g = {plot(graph)}; const x = g._fullLayout.xaxis;
        const r = g.querySelector('.nsewdrag').getBoundingClientRect(); const s = g.layout.meta.seconds_per_unit;
        return [r.left + x.d2p({start_s} / s), r.left + x.d2p({end_s} / s), (r.top + r.bottom) / 2]; }})()""")
    if box[1] - box[0] < 10:
        raise ValueError(f"a drag of {box[1] - box[0]:.1f} pixels: zoom in in steps")
    page.mouse.move(box[0], box[2])
    page.mouse.down()
    page.mouse.move((box[0] + box[1]) / 2, box[2], steps=5)
    page.mouse.move(box[1], box[2], steps=5)
    page.mouse.up()


def hover_label(page, graph: str) -> str | None:
    """Move the mouse over the first hover point (a trace whose ``meta.role`` is ``"hover"``) inside the plot area
    and return the hover label's text, or None when there is no such point or no label shows within 5 s."""
    point = page.evaluate(f"""(() => {{ const g = {plot(graph)}; const x = g._fullLayout.xaxis, y = g._fullLayout.yaxis;
        const r = g.querySelector('.nsewdrag').getBoundingClientRect();
        for (const t of g._fullData.filter(d => d.meta && d.meta.role === 'hover')) {{
            for (let i = 0; i < t.x.length; i++) {{
                const px = x.d2p(t.x[i]), py = y.d2p(t.y[i]);
                if (px > 5 && px < r.width - 5 && py > 5 && py < r.height - 5) return [r.left + px, r.top + py];
            }}
        }}
        return null; }})()""")
    if point is None:
        return None
    page.mouse.move(*point)
    try:
        page.wait_for_selector(f"#{graph} .hoverlayer .hovertext", timeout=5000)
    except Exception:  # noqa: BLE001 - Playwright's timeout: no label
        return None
    return page.text_content(f"#{graph} .hoverlayer .hovertext")


def dash_response_size(response) -> int | None:
    """Bytes of a Dash callback's response (a Playwright response), 0 for any other response, None for one whose
    body could not be read (its page closed first): a caller counts those rather than taking them for small."""
    if "_dash-update-component" not in response.url:
        return 0
    try:
        return len(response.body())
    except Exception:  # noqa: BLE001 - the page closed before the body was read
        return None
