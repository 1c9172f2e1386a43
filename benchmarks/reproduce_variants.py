"""Recompute every number quoted in ``expe/explanations/fcfs-vs-easy.md`` and ``replay-feedback-2024.md`` (run by hand).

Two kinds of runs:

- *engine*: batreplay's embedded engine (Batsim-exact) through :func:`batreplay.run.runner.run`, on a Batsim
  workload converted here with :func:`batreplay.workloads.batsim_workload.swf_to_workload`, so that each job of
  such a workload also carries ``requested_time``, its SWF requested time (s, -1 when unknown), which the
  ``easy-schedulus`` scheduler can take as its estimate (option ``estimate_field``).
- *event replay*: a small independent re-implementation of the event handling of Rauch's Schedulus (2022), one
  event at a time, used to vary what the engine fixes (order of simultaneous events, estimates, platform size)
  in seconds per run. Its FCFS equals the engine's on CTC-SP2 (mean wait 767,858 s both, 0 s jobs kept).

Usage::

    uv run python benchmarks/reproduce_variants.py                  # everything, about 25 min on 2 busy cores
    uv run python benchmarks/reproduce_variants.py --part ctc       # CTC-SP2 (item 14), --part metacentrum,
                                                                    # hpc2n or kth; --seeds for the spread

Prints Markdown tables: variant, our value, the published one, difference in %.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from batreplay.platforms.generate import scale_platform, write_platform, write_platform_text
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.run.runner import RunSpec, run
from batreplay.workloads.batsim_workload import swf_to_workload
from batreplay.workloads.swf import read_swf

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT.parent / "shared" / "workloads"
LOGS = {
    "ctc": (WORKLOADS / "CTC-SP2-1996-3.1-cln.swf.gz", 338),
    "metacentrum": (WORKLOADS / "METACENTRUM-2009-2.swf.gz", 806),
    "hpc2n": (WORKLOADS / "HPC2N-2002-2.2-cln.swf.gz", 240),
    "kth": (WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz", 100),
}
PUBLISHED = pd.read_csv(ROOT / "expe" / "published" / "rauch2022-schedulus.csv")
MADON = pd.read_csv(ROOT / "expe" / "published" / "madon2024-fgcs.csv")
DAY = 86400.0


def rauch(log: str, experiment: str, metric: str) -> float:
    """A value of Rauch 2022, Tables I-III (``expe/published/rauch2022-schedulus.csv``)."""
    rows = PUBLISHED[(PUBLISHED.log == log) & (PUBLISHED.experiment == experiment) & (PUBLISHED.metric == metric)]
    return float(rows.value.iloc[0])


def madon(experiment: str, metric: str) -> float:
    """A KTH-SP2 rigid value of Madon, Da Costa, Pierson 2024, Table 1 (days)."""
    rows = MADON[(MADON.log == "kth-sp2") & (MADON.experiment == experiment) & (MADON.replay == "rigid")
                 & (MADON.metric == metric)]
    return float(rows.value.iloc[0])


# -- engine runs ----------------------------------------------------------------------------------------------

def engine_run(work: Path, swf: Path, scheduler: str, *, nodes: int | None = None, platform: str | None = None,
               nodes_factor: float = 1.0, speed_factor: float = 1.0, walltime_factor: float | None = 1.0,
               zero_runtime: str = "drop", res_source: str = "allocated",
               scheduler_options: dict | None = None) -> dict:
    """One embedded-engine run; returns batreplay's metrics (:func:`batreplay.analysis.metrics.summarize`) plus
    ``nb_converted`` (jobs in the workload). ``nodes``: a homogeneous platform of that many 1 Gflop/s nodes;
    ``platform``: a shipped one, scaled by ``nodes_factor`` / ``speed_factor`` (Madon et al. 2024 infra, perf)."""
    tag = f"{swf.name.split('.')[0]}-{scheduler}-{nodes or platform}-n{nodes_factor}-s{speed_factor}-" \
          f"w{walltime_factor}-{zero_runtime}-{res_source}-{json.dumps(scheduler_options or {}, sort_keys=True)}"
    tag = "".join(c if c.isalnum() or c in "-." else "_" for c in tag)
    platform_path = work / f"{tag}.xml"
    if nodes is not None:
        write_platform(platform_path, nodes, 1e9)
    else:
        write_platform_text(platform_path, scale_platform(SHIPPED_PLATFORMS[platform], nodes_factor, speed_factor))
    size = nodes if nodes is not None else int(round(100 * nodes_factor)) if platform == "kth-sp2" else None
    log = read_swf(swf)
    converted = swf_to_workload(log, profile="parallel_homogeneous", node_speed=1e9, walltime_factor=walltime_factor,
                                zero_runtime=zero_runtime, res_source=res_source, nb_res=size, oversized="keep")
    document = converted.to_json_dict()
    requested = log.jobs.set_index("line")["requested_time"].loc[converted.job_table["swf_line"]].tolist()
    for job, value in zip(document["jobs"], requested):
        job["requested_time"] = float(value)
    workload = work / f"{tag}.json"
    workload.write_text(json.dumps(document))
    spec = RunSpec.build(workload=workload, platform=platform_path, scheduler=scheduler, out_dir=work / tag,
                         force=True, scheduler_options=scheduler_options or {})
    metrics = dict(run(spec).metrics)
    metrics["nb_converted"] = len(document["jobs"])
    return metrics


# -- event replay of Schedulus ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Jobs:
    """One SWF log as Schedulus reads it: jobs with a known run time (-1 left out), processors = requested
    processors or, when unknown, allocated ones; times in s."""

    submission: np.ndarray
    run: np.ndarray
    procs: np.ndarray
    requested: np.ndarray

    @classmethod
    def read(cls, path: Path, zero_runtime: str = "keep", procs: str = "requested") -> Jobs:
        frame = read_swf(path).jobs
        frame = frame[frame.run_time != -1]
        if zero_runtime == "drop":
            frame = frame[frame.run_time != 0]
        allocated = frame.allocated_processors.to_numpy()
        asked = frame.requested_processors.to_numpy()
        count = np.where(asked > 0, asked, allocated) if procs == "requested" else allocated
        return cls(frame.submission_time.to_numpy(float), frame.run_time.to_numpy(float), count.astype(int),
                   frame.requested_time.to_numpy(float))


def replay(jobs: Jobs, nodes: int, *, backfill: str | None = "schedulus", estimate: str = "requested",
           triggers: str = "schedulus", seed: int | None = None) -> dict:
    """Replay ``jobs`` on ``nodes`` nodes, one event at a time, and return Rauch's metrics.

    Args:
        backfill: None (FCFS), ``"schedulus"`` (shadow time = latest expected end of the running jobs, strict
            time test, as in Schedulus' code) or ``"easy"`` (shadow time = when the head can start, time test
            ``<=``, jobs expected to end at the shadow time counted in the extra nodes, as batreplay's EASY).
        estimate: ``"requested"`` (SWF requested time, -1 kept as a number), ``"walltime"`` (max(requested,
            run time), the campaign's walltimes) or ``"run"`` (exact run times).
        triggers: ``"schedulus"`` (backfill after a submission whose head does not fit and after a completion
            that started no head job) or ``"every"`` (after every event, as EASY).
        seed: None: simultaneous events in file order, submissions before completions; an integer: in a random
            order drawn with that seed (Schedulus' event list breaks time ties by object address).

    Returns:
        ``mean_wait`` (s, over every job of the log, as Schedulus divides by all jobs read),
        ``bsld`` (mean bounded slowdown, tau = 10 s, over the jobs that ran), ``max_wait`` (s), ``jobs``.
    """
    run_time, procs, requested = jobs.run.tolist(), jobs.procs.tolist(), jobs.requested
    if estimate == "requested":
        guess = requested.tolist()
    elif estimate == "walltime":
        guess = np.where(requested > 0, np.maximum(requested, jobs.run), jobs.run).tolist()
    else:
        guess = list(run_time)
    rng = None if seed is None else np.random.default_rng(seed)
    count = len(run_time)
    start: list[float | None] = [None] * count
    free = nodes
    running: dict[int, float] = {}  # job -> expected end, in start order
    queue: list[int] = []
    events: list[tuple[float, int, float, int]] = []
    order = 0

    def key() -> float:
        nonlocal order
        order += 1
        return float(order) if rng is None else float(rng.random())

    for job in range(count):
        if procs[job] <= nodes:  # Schedulus ignores wider jobs
            events.append((float(jobs.submission[job]), 0, key(), job))
    heapq.heapify(events)

    def launch(job: int, now: float) -> None:
        nonlocal free
        free -= procs[job]
        start[job] = now
        running[job] = now + guess[job]
        heapq.heappush(events, (now + run_time[job], 1 if rng is None else 0, key(), ~job))

    def backfill_now(now: float) -> None:
        nonlocal queue
        head = queue[0]
        needed, available, extra, shadow = procs[head], free, 0, -math.inf
        ends = sorted(running.items(), key=lambda item: item[1])
        for index, (job, end) in enumerate(ends):
            if available < needed:
                available += procs[job]
            if available >= needed:
                shadow, extra = end, available - needed
                if backfill == "easy":
                    shadow = max(end, now)
                    for other, other_end in ends[index + 1:]:
                        if other_end > shadow + 1e-7:
                            break
                        available += procs[other]
                    extra = available - needed
                    break
        kept = [head]
        for job in queue[1:]:
            fits = procs[job] <= free
            ends_in_time = now + guess[job] < shadow if backfill == "schedulus" else now + guess[job] <= shadow
            if fits and ends_in_time:
                launch(job, now)
            elif fits and procs[job] <= extra:
                launch(job, now)
                extra -= procs[job]
            else:
                kept.append(job)
        queue = kept

    while events:
        now, _, _, item = heapq.heappop(events)
        started = 0
        if item >= 0:
            queue.append(item)
            if triggers == "schedulus":
                if procs[queue[0]] <= free:
                    launch(queue.pop(0), now)
                    continue
            else:
                while started < len(queue) and procs[queue[started]] <= free:
                    launch(queue[started], now)
                    started += 1
                del queue[:started]
        else:
            job = ~item
            free += procs[job]
            del running[job]
            while started < len(queue) and procs[queue[started]] <= free:
                launch(queue[started], now)
                started += 1
            del queue[:started]
            if triggers == "schedulus" and started:
                continue
        if queue and backfill is not None:
            backfill_now(now)
    begun = np.array([np.nan if s is None else s for s in start])
    ran = ~np.isnan(begun)
    wait = begun[ran] - jobs.submission[ran]
    bsld = np.maximum((wait + jobs.run[ran]) / np.maximum(jobs.run[ran], 10.0), 1.0)
    return {"mean_wait": float(wait.mean()), "bsld": float(bsld.mean()), "max_wait": float(wait.max()),
            "jobs": int(ran.sum())}


def spread(jobs: Jobs, nodes: int, seeds: int, **options) -> dict:
    """:func:`replay` over ``seeds`` random orders of simultaneous events: mean, min and max of each metric."""
    runs = [replay(jobs, nodes, seed=seed, **options) for seed in range(seeds)]
    return {metric: (float(np.mean([r[metric] for r in runs])), min(r[metric] for r in runs),
                     max(r[metric] for r in runs)) for metric in ("mean_wait", "bsld", "max_wait")}


# -- printing -----------------------------------------------------------------------------------------------------

def pct(ours: float, paper: float) -> str:
    return f"{100 * (ours - paper) / paper:+.2f} %"


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    sys.stdout.flush()


def rauch_rows(log: str, label: str, experiment: str, wait: float, bsld: float) -> list[str]:
    w, b = rauch(log, experiment, "mean_waiting_time_s"), rauch(log, experiment, "mean_bounded_slowdown")
    return [label, f"{wait:,.0f}", f"{w:,.0f}", pct(wait, w), f"{bsld:,.1f}", f"{b:,.0f}", pct(bsld, b)]


RAUCH_HEADER = ["variant", "mean wait (s)", "Rauch", "diff", "mean bounded slowdown", "Rauch", "diff"]
SPREAD_HEADER = RAUCH_HEADER + ["max wait (d), min-max"]


def spread_row(log: str, label: str, experiment: str, result: dict) -> list[str]:
    (w, w0, w1), (b, b0, b1) = result["mean_wait"], result["bsld"]
    row = rauch_rows(log, label, experiment, w, b)
    row[1] = f"{w:,.0f} [{w0:,.0f}-{w1:,.0f}]"
    row[4] = f"{b:,.1f} [{b0:,.1f}-{b1:,.1f}]"
    _, m0, m1 = result["max_wait"]
    return row + [f"{m0 / DAY:.1f}-{m1 / DAY:.1f}"]


def engine_rows(work: Path, log: str, rauch_log: str, variants, *, count_jobs: bool = True,
                extra=lambda metrics, experiment: []) -> list[list[str]]:
    """One table row per ``(label, scheduler, run options)`` of ``variants``: an engine run on the whole ``log``
    (a key of ``LOGS``) beside Rauch's value for its experiment (FCFS for ``fcfs``, else EASY); ``count_jobs`` adds
    the simulated job count to the label, ``extra(metrics, experiment)`` more cells."""
    swf, nodes = LOGS[log]
    rows = []
    for label, scheduler, options in variants:
        metrics = engine_run(work, swf, scheduler, nodes=nodes, **options)
        experiment = "FCFS" if scheduler == "fcfs" else "EASY"
        shown = f"{label} ({metrics['nb_converted']:,} jobs)" if count_jobs else label
        rows.append(rauch_rows(rauch_log, shown, experiment, metrics["mean_waiting_time"],
                               metrics["mean_bounded_slowdown"]) + extra(metrics, experiment))
    return rows


def part_ctc(work: Path, seeds: int) -> None:
    swf, nodes = LOGS["ctc"]
    rows = engine_rows(work, "ctc", "ctc-sp2", (
        ("FCFS, 0 s jobs dropped (campaign)", "fcfs", dict(zero_runtime="drop")),
        ("FCFS, 0 s jobs kept (min 1 s)", "fcfs", dict(zero_runtime="min")),
        ("EASY, 0 s jobs dropped (campaign)", "easy", dict(zero_runtime="drop")),
        ("EASY, 0 s jobs kept (min 1 s)", "easy", dict(zero_runtime="min")),
        ("easy-schedulus, estimate = walltime = max(requested, run)", "easy-schedulus", dict(zero_runtime="min")),
        ("easy-schedulus, estimate = SWF requested time", "easy-schedulus",
         dict(zero_runtime="min", scheduler_options={"estimate_field": "requested_time"})),
    ), extra=lambda metrics, _: [f"{metrics['max_waiting_time'] / DAY:.2f}"])
    table("CTC-SP2, engine runs (338 nodes, walltime = max(requested time, run time))",
          RAUCH_HEADER + ["max wait (d)"], rows)

    keep = Jobs.read(swf, "keep")
    rows = []
    for size in (336, 337, 338, 340, 350, 430, 512):
        fcfs = replay(keep, size, backfill=None)
        easy = replay(keep, size, backfill="easy", estimate="walltime", triggers="every")
        rows.append([str(size), f"{fcfs['mean_wait']:,.0f}", f"{fcfs['bsld']:,.1f}", f"{easy['mean_wait']:,.0f}",
                     f"{easy['bsld']:,.1f}"])
    table("CTC-SP2, platform size (event replay, 0 s jobs kept; Rauch: FCFS 768,179 s / 4,276, EASY 67,508 s / 181)",
          ["nodes", "FCFS mean wait (s)", "FCFS bounded slowdown", "EASY mean wait (s)", "EASY bounded slowdown"],
          rows)

    drop = Jobs.read(swf, "drop")
    rows = [spread_row("ctc-sp2", "FCFS", "FCFS", spread(keep, nodes, seeds, backfill=None))]
    for label, data, options in (
        ("EASY (batreplay's rules), estimate = walltime", keep, dict(backfill="easy", estimate="walltime", triggers="every")),
        ("EASY, estimate = requested time", keep, dict(backfill="easy", estimate="requested", triggers="every")),
        ("EASY, estimate = run time (exact)", keep, dict(backfill="easy", estimate="run", triggers="every")),
        ("EASY rules, Schedulus triggers, requested time", keep, dict(backfill="easy", estimate="requested")),
        ("Schedulus shadow time, EASY triggers, requested time", keep,
         dict(backfill="schedulus", estimate="requested", triggers="every")),
        ("Schedulus as coded (shadow, triggers, requested time)", keep, dict(backfill="schedulus")),
        ("Schedulus as coded, 0 s jobs dropped", drop, dict(backfill="schedulus")),
        ("Schedulus as coded, estimate = walltime", keep, dict(backfill="schedulus", estimate="walltime")),
        ("Schedulus as coded, estimate = run time", keep, dict(backfill="schedulus", estimate="run")),
    ):
        rows.append(spread_row("ctc-sp2", label, "EASY", spread(data, nodes, seeds, **options)))
    table(f"CTC-SP2, event replay, 338 nodes, 0 s jobs kept unless said: mean [min-max] over {seeds} orders of "
          "simultaneous events", SPREAD_HEADER, rows)


def part_metacentrum(work: Path, seeds: int) -> None:
    swf, nodes = LOGS["metacentrum"]

    def per_event(metrics: dict, experiment: str) -> list[str]:
        published = rauch("metacentrum", experiment, "mean_running_jobs_per_event")
        return [f"{metrics['mean_running_jobs_per_event']:.1f}", f"{published:.0f}"]

    rows = engine_rows(work, "metacentrum", "metacentrum", (
        ("FCFS, 0 s jobs dropped (campaign)", "fcfs", dict(zero_runtime="drop")),
        ("FCFS, 0 s jobs kept (min 1 s)", "fcfs", dict(zero_runtime="min")),
        ("EASY, 0 s jobs dropped (campaign)", "easy", dict(zero_runtime="drop")),
        ("EASY, 0 s jobs kept (min 1 s)", "easy", dict(zero_runtime="min")),
        ("easy-schedulus, 0 s kept, estimate = SWF requested time (-1)", "easy-schedulus",
         dict(zero_runtime="min", scheduler_options={"estimate_field": "requested_time"})),
    ), extra=per_event)
    table("MetaCentrum, engine runs (806 nodes)", RAUCH_HEADER + ["running jobs per event", "Rauch"], rows)
    rows = []
    for zero in ("keep", "drop"):
        data = Jobs.read(swf, zero)
        rows.append(spread_row("metacentrum", f"FCFS, 0 s jobs {zero}", "FCFS", spread(data, nodes, seeds, backfill=None)))
        rows.append(spread_row("metacentrum", f"Schedulus as coded, 0 s jobs {zero}", "EASY",
                               spread(data, nodes, seeds, backfill="schedulus")))
    table(f"MetaCentrum, event replay, 806 nodes: mean [min-max] over {seeds} orders of simultaneous events",
          SPREAD_HEADER, rows)


def part_hpc2n(work: Path, seeds: int) -> None:
    swf, nodes = LOGS["hpc2n"]
    rows = engine_rows(work, "hpc2n", "hpc2n", (
        ("FCFS, allocated processors (campaign)", "fcfs", dict(res_source="allocated")),
        ("FCFS, requested processors", "fcfs", dict(res_source="requested")),
        ("EASY, allocated processors (campaign)", "easy", dict(res_source="allocated")),
        ("EASY, requested processors", "easy", dict(res_source="requested")),
        ("easy-schedulus, requested processors, estimate = SWF requested time", "easy-schedulus",
         dict(res_source="requested", scheduler_options={"estimate_field": "requested_time"})),
    ), count_jobs=False)
    table("HPC2N, engine runs (240 nodes)", RAUCH_HEADER, rows)
    data = Jobs.read(swf, "keep")
    rows = [spread_row("hpc2n", "FCFS", "FCFS", spread(data, nodes, seeds, backfill=None)),
            spread_row("hpc2n", "Schedulus as coded", "EASY", spread(data, nodes, max(1, seeds // 2),
                                                                      backfill="schedulus"))]
    table("HPC2N, event replay (requested processors): mean [min-max] over orders of simultaneous events",
          SPREAD_HEADER, rows)


def part_kth(work: Path, seeds: int) -> None:
    swf, _ = LOGS["kth"]
    rows = []
    for experiment, scheduler, nodes_factor, speed_factor in (
        ("EASY", "easy", 1.0, 1.0), ("FCFS", "fcfs", 1.0, 1.0),
        ("perf/2", "easy", 1.0, 0.5), ("infra/2", "easy", 0.5, 1.0),
    ):
        for zero in ("drop", "min"):
            m = engine_run(work, swf, scheduler, platform="kth-sp2", nodes_factor=nodes_factor,
                           speed_factor=speed_factor, walltime_factor=2.0, zero_runtime=zero)
            cells = [f"{experiment}, zero_runtime={zero}", f"{m['nb_converted']:,}"]
            for metric, value in (("makespan_days", m["makespan"]), ("mean_waiting_time_days", m["mean_waiting_time"]),
                                  ("max_waiting_time_days", m["max_waiting_time"])):
                paper = madon(experiment, metric)
                cells += [f"{value / DAY:.2f}", f"{paper:.2f}", pct(value / DAY, paper)]
            rows.append(cells)
    table("KTH-SP2 rigid, Madon et al. 2024 Table 1 (walltime = max(requested, 2 x run time); paper: 28,475 jobs)",
          ["variant", "jobs", "makespan (d)", "paper", "diff", "mean wait (d)", "paper", "diff", "max wait (d)",
           "paper", "diff"], rows)


PARTS = {"ctc": part_ctc, "metacentrum": part_metacentrum, "hpc2n": part_hpc2n, "kth": part_kth}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all", help="which log (default: all)")
    parser.add_argument("--seeds", type=int, default=10,
                        help="random orders of simultaneous events per event-replay variant (default 10)")
    parser.add_argument("--work", type=Path, default=None, help="folder for workloads and run directories "
                        "(default: a temporary folder, removed at the end)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reproduce-variants-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for name, part in PARTS.items():
            if args.part in (name, "all"):
                started = time.perf_counter()
                part(work, args.seeds)
                print(f"\n({name}: {time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
