"""Structure of the session graphs a campaign replays: Madon, Da Costa, Pierson 2024, Sect. 7.2 and Fig. 6.

For each log and each session method of the campaign (``a0``, ``a60``), the users' session graphs are built from
the log's replayed jobs exactly as the feedback replay builds them
(:func:`batreplay.replay.session_source.session_graphs_for`), and described by
:func:`batreplay.replay.session_graph.describe_session_graphs`: the longest dependency chain and the arity (the
largest number of direct predecessors or successors of a session) of each user's graph, and the think time of
every dependency (Definition 6).

The paper states (Sect. 7.2, without naming the log): with a0, 75 % of the think times are below 10 h and 35 % below
1 h; with a60, 50 % and about 13 %; no a60 graph has an arity above 11. :func:`session_table` gives ours per
log and pooled over the logs, to compare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from batreplay.reports.figures import colour
from batreplay.reports.tables import cell
from batreplay.replay.session_graph import SessionGraphStatistics, describe_session_graphs
from batreplay.replay.session_source import session_graphs_for

#: The paper's statements on the think times and arity of its session graphs (both logs), Sect. 7.2.
PAPER_STATEMENT = ("Madon et al. 2024, Sect. 7.2 (without naming the log): with a0, 75 % of the think times are "
                   "below 10 h and 35 % below 1 h; with a60, 50 % and about 13 %; no a60 graph has an arity "
                   "above 11.")
POOLED = "all logs"


def session_statistics(job_table: pd.DataFrame, labels: Sequence[str]) -> dict[str, SessionGraphStatistics]:
    """Session graph statistics of one log's replayed jobs for each session label (``a0``, ``a60``).

    Args:
        job_table: the run's ``jobs.csv`` (``job_id``, ``user_id``, ``swf_submission_time``, ``swf_wait_time``,
            ``run_time``; seconds).
        labels: session rules as the campaign writes them.

    Raises:
        ReplayError: a rule that cannot be read (not expected: the campaign spec checked them).
    """
    return {label: describe_session_graphs(session_graphs_for(job_table, label)) for label in labels}


def _row(log: str, label: str, per_user: pd.DataFrame, think: np.ndarray) -> dict[str, object]:
    def share(limit: float) -> float:
        return 100.0 * float((think < limit).mean()) if think.size else float("nan")

    return {
        "log": log, "sessions": label, "users": len(per_user), "sessions_total": int(per_user["nb_sessions"].sum()),
        "dependencies": int(per_user["nb_dependencies"].sum()),
        "longest_path_median": float(per_user["longest_path"].median()),
        "longest_path_max": int(per_user["longest_path"].max()),
        "arity_median": float(per_user["arity"].median()), "arity_max": int(per_user["arity"].max()),
        "think_time_median_h": float(np.median(think)) / 3600.0 if think.size else float("nan"),
        "think_time_below_1h_pct": share(3600.0), "think_time_below_10h_pct": share(36000.0),
    }


def session_table(statistics: Mapping[str, Mapping[str, SessionGraphStatistics]],
                  labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per log x session label, and one per label pooled over the logs (log ``all logs``) when there
    are several logs.

    Args:
        statistics: log name -> session label -> statistics (:func:`session_statistics`).
        labels: log name -> how the table names it (default: the name).

    Returns:
        Columns ``log``, ``sessions`` (the label), ``users``, ``sessions_total``, ``dependencies`` (direct,
        root edges excluded), ``longest_path_median`` / ``_max`` (sessions), ``arity_median`` / ``_max``,
        ``think_time_median_h`` (hours), ``think_time_below_1h_pct`` and ``think_time_below_10h_pct`` (% of the
        dependencies).
    """
    labels = dict(labels or {})
    rows = []
    methods = list(dict.fromkeys(m for per_log in statistics.values() for m in per_log))
    for log, per_log in statistics.items():
        for method, stats in per_log.items():
            rows.append(_row(labels.get(log, log), method, stats.per_user, stats.think_times))
    if len(statistics) > 1:
        for method in methods:
            chosen = [per_log[method] for per_log in statistics.values() if method in per_log]
            rows.append(_row(POOLED, method, pd.concat([s.per_user for s in chosen], ignore_index=True),
                             np.concatenate([s.think_times for s in chosen])))
    return pd.DataFrame(rows)


def session_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`session_table` as text cells with readable headings."""
    def number(values: pd.Series, decimals: int) -> list[str]:
        return [cell(v, decimals) for v in values.astype("float64")]

    return pd.DataFrame({
        "log": table["log"], "sessions": table["sessions"], "users": number(table["users"], 0),
        "sessions (total)": number(table["sessions_total"], 0), "dependencies": number(table["dependencies"], 0),
        "longest path: median / max": [f"{a:g} / {b:,}" for a, b in zip(table["longest_path_median"],
                                                                         table["longest_path_max"])],
        "arity: median / max": [f"{a:g} / {b:,}" for a, b in zip(table["arity_median"], table["arity_max"])],
        "think time: median (h)": number(table["think_time_median_h"], 1),
        "think time < 1 h (%)": number(table["think_time_below_1h_pct"], 1),
        "think time < 10 h (%)": number(table["think_time_below_10h_pct"], 1),
    })


def _plain_ticks(axis) -> None:
    """x tick labels as plain numbers (``0.1``, ``10``, ``1000``), none on minor ticks."""
    axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
    axis.xaxis.set_minor_formatter(NullFormatter())


def _decade_ticks(axis, values: np.ndarray, *, most: int = 7) -> None:
    """Labelled x ticks at powers of 10 spanning the positive ``values``, every decade or every other one so that
    there are at most ``most`` (the labels of a wide range would overlap otherwise)."""
    positive = values[values > 0]
    if not positive.size:
        return
    low, high = int(np.floor(np.log10(positive.min()))), int(np.ceil(np.log10(positive.max())))
    step = max(1, int(np.ceil((high - low + 1) / most)))
    axis.set_xticks([10.0 ** k for k in range(low, high + 1, step)])
    _plain_ticks(axis)
    axis.set_xlim(10.0 ** low, 10.0 ** high)


def _steps(axis, values: np.ndarray, edges: np.ndarray, shade: str, label: str) -> None:
    counts, _ = np.histogram(values, bins=edges)
    axis.stairs(counts, edges, color=shade, linewidth=1.1, label=label)


def session_figure(title: str, statistics: Mapping[str, SessionGraphStatistics]) -> Figure:
    """Madon et al. 2024, Fig. 6, and the think times of Sect. 7.2, for one log: the number of users by the
    longest path of their session graph and by its arity (logarithmic bins), and the cumulative distribution
    of the think times (hours, logarithmic; dotted lines at 1 h and 10 h), one curve per session label."""
    figure = Figure(figsize=(12.0, 3.4), layout="constrained")
    axes = figure.subplots(1, 3)
    methods = list(statistics)
    for name, axis, xlabel in (("longest_path", axes[0], "longest path (sessions)"),
                               ("arity", axes[1], "arity (max. predecessors or successors)")):
        high = max(int(s.per_user[name].max()) for s in statistics.values())
        # one bin per value up to about 10, then wider; arity 0 (a graph without dependencies) has a bin too
        edges = np.unique(np.round(np.geomspace(1, high + 1, 30)))
        edges = np.concatenate([[0.0], edges]) if name == "arity" else edges
        for method, stats in statistics.items():
            _steps(axis, stats.per_user[name].to_numpy(), edges, colour(method, methods), method)
        if high > 20:
            axis.set_xscale("symlog", linthresh=1.0, linscale=0.5)
        _plain_ticks(axis)
        axis.set_xlabel(xlabel)
        axis.set_ylabel("users")
        axis.legend(fontsize="small")
    think_axis = axes[2]
    for method, stats in statistics.items():
        hours = np.sort(stats.think_times) / 3600.0
        positive = hours[hours > 0]
        if not positive.size:
            continue
        share = np.arange(1, hours.size + 1) / hours.size
        think_axis.step(np.maximum(hours, positive.min()), share, where="post", color=colour(method, methods),
                        label=f"{method} ({hours.size:,} dependencies)")
    for limit in (1.0, 10.0):
        think_axis.axvline(limit, color="0.5", linestyle=":", linewidth=0.8)
    think_axis.set_xscale("log")
    _decade_ticks(think_axis, np.concatenate([s.think_times for s in statistics.values()]) / 3600.0)
    think_axis.set_ylim(0.0, 1.0)
    think_axis.set_xlabel("think time (h)")
    think_axis.set_ylabel("fraction of dependencies")
    think_axis.legend(fontsize="small", loc="upper left")
    figure.suptitle(f"{title}: session graphs: longest path, arity and think times (cf. Madon et al. 2024, Fig. 6, "
                    f"Sect. 7.2)")
    return figure
