"""Step series sized to what a graph can show: a long step function (utilisation, queue length: one point per
event, 57,000 for the whole KTH-SP2 log, 400,000 for HPC2N) restricted to the visible time window and reduced to a
few thousand points that draw the same picture.

The reduction is M4 (Jugel et al., "M4: A Visualization-Oriented Time Series Data Aggregation", PVLDB 7(10),
2014): the window is cut into equal bins of time, and of the points of each bin only the first, the last, the
lowest and the highest are kept. Drawn as a line at most one pixel column per bin wide, the kept points give the
same pixels as all of them. The selection is :class:`tsdownsample.M4Downsampler`'s (a maintained Rust library).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tsdownsample import M4Downsampler

#: Points at most of a series drawn for the current view (a multiple of 4: M4 keeps 4 points per bin).
VIEW_POINTS = 4_000


def step_in_view(times: np.ndarray, values: np.ndarray, low: float | None = None, high: float | None = None,
                 points: int = VIEW_POINTS) -> tuple[np.ndarray, np.ndarray, bool]:
    """The steps of ``(times, values)`` seen in ``[low, high]``, at most ``points`` of them.

    Args:
        times: increasing instants (s), shape (n,); ``values[i]`` holds from ``times[i]`` to ``times[i + 1]``.
        values: the step values, shape (n,).
        low, high: the visible window (s); None: from the first point, to the last.
        points: most points returned (rounded down to a multiple of 4, at least 8).

    Returns:
        ``(times, values, reduced)``: the points whose step is visible (the one in effect at ``low`` and the one
        after ``high`` included, so the line reaches both edges), all of them when there are at most ``points``,
        else the M4 selection (first, last, lowest, highest point of each of ``points / 4`` equal bins of time);
        ``reduced`` says which.

    Raises:
        ValueError: ``times`` and ``values`` of different lengths, or ``times`` not increasing.
    """
    times = np.asarray(times, dtype="float64")
    values = np.asarray(values, dtype="float64")
    if times.shape != values.shape or times.ndim != 1:
        raise ValueError(f"step_in_view: times {times.shape} and values {values.shape} must be 1-d, of one length")
    if times.size > 1 and not (np.diff(times) > 0).all():
        raise ValueError("step_in_view: times must be increasing")
    first = 0 if low is None else max(int(np.searchsorted(times, low, side="right")) - 1, 0)
    last = times.size if high is None else min(int(np.searchsorted(times, high, side="left")) + 1, times.size)
    times, values = times[first:last], values[first:last]
    budget = max(points - points % 4, 8)  # (M4 needs 2 bins at least)
    if times.size <= budget:
        return times, values, False
    kept = M4Downsampler().downsample(times, values, n_out=budget).astype(np.int64)
    kept = np.union1d(kept, [0, times.size - 1])  # (the edges of the window, always)
    return times[kept], values[kept], True


def _number(value: Any) -> float | None:
    """A finite number from a browser's relayout value, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if np.isfinite(value) else None


def relayout_range(relayout: dict[str, Any], axis: str) -> tuple[float, float] | None | bool:
    """The range a browser's zoom, pan or reset gives ``axis`` (``"xaxis"``, ``"yaxis"``, ``"xaxis2"``...) in
    Plotly's ``relayoutData`` (a dict of the changed layout attributes): ``(low, high)`` in the axis' unit, True for
    an autorange (reset, double click), None when it says nothing usable about it (values that are not finite
    numbers included)."""
    if relayout.get(f"{axis}.autorange") is True:
        return True
    pair = relayout.get(f"{axis}.range")
    low, high = pair if isinstance(pair, list) and len(pair) == 2 else (
        relayout.get(f"{axis}.range[0]"), relayout.get(f"{axis}.range[1]"))
    low, high = _number(low), _number(high)
    if low is None or high is None or low == high:
        return None
    return min(low, high), max(low, high)


def time_range(relayout: Any) -> tuple[float, float] | None | bool:
    """The time range a browser's zoom, pan or reset gives a figure of one or two rows sharing their time axis
    (``xaxis``, or the lower row's ``xaxis2``): as :func:`relayout_range`, None also when ``relayout`` is no dict or
    changes neither (a zoom of a y axis alone)."""
    if not isinstance(relayout, dict):
        return None
    shown = relayout_range(relayout, "xaxis")
    return relayout_range(relayout, "xaxis2") if shown is None else shown
