"""AccaSim's EASY backfilling on an SWF file: the foreign simulator of ``bench_performance.py`` (run by hand).

This script runs in its own environment with AccaSim 1.1.3 (PyPI ``accasim``; Galleguillos et al., "AccaSim:
a customizable workload management simulator for job dispatching research in HPC systems", Cluster
Computing 2020), never in batreplay's, and imports nothing of batreplay::

    uv venv /tmp/accasim-venv --python 3.11
    uv pip install --python /tmp/accasim-venv/bin/python accasim==1.1.3
    /tmp/accasim-venv/bin/python benchmarks/accasim_easy.py --swf jobs.swf --nodes 100 --out /tmp/accasim-kth

The machine is ``--nodes`` identical nodes of ``--cores-per-node`` cores; AccaSim's default SWF reader turns a
job of ``p`` processors into ``p`` requests of one core each (its requested processors, SWF field 8, else the
allocated ones, field 5), its run time (field 4) is how long it runs and its requested time (field 9) the
estimate EASY plans with. The dispatcher is AccaSim's ``EASYBackfilling`` with its ``FirstFit`` allocator.

Writes ``OUT/schedule.csv`` (no header, ``;``-separated: ``job_id;submission_time;starting_time;finish_time``,
integer seconds on the SWF clock; AccaSim's own dispatching-plan file with a chosen format) and prints one JSON
line: the number of jobs, the simulation's own seconds and the file.

AccaSim's EASY is not Batsim's: backfilled jobs are not kept off the nodes reserved for the first waiting job,
which is tried again only at its reservation time, so schedules differ (see benchmarks/README.md); compare
speed and memory, not schedules.
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import json
import time
from pathlib import Path

# AccaSim 1.1.3 imports ``collections.Mapping``, removed in Python 3.10: alias it before importing accasim.
for _name in ("Mapping", "MutableMapping", "Sequence", "Iterable", "Callable"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

from accasim.base.allocator_class import FirstFit
from accasim.base.scheduler_class import EASYBackfilling
from accasim.base.simulator_class import Simulator

#: AccaSim's dispatching-plan format (its ``SCHEDULE_OUTPUT`` constant): one line per job, integer seconds.
SCHEDULE_OUTPUT = {
    "format": "{job_id};{submission_time};{starting_time};{finish_time}",
    "attributes": {
        "job_id": ("id", "str"),
        "submission_time": ("queued_time", "int"),
        "starting_time": ("start_time", "int"),
        "finish_time": ("end_time", "int"),
    },
}


def write_system_config(path: Path, nodes: int, cores_per_node: int) -> Path:
    """Write AccaSim's system configuration: ``nodes`` identical nodes of ``cores_per_node`` cores, one SWF
    processor = one core. Returns ``path``."""
    config = {"groups": {"node": {"core": cores_per_node}}, "resources": {"node": nodes},
              "equivalence": {"processor": {"core": 1}}, "start_time": 0}
    path.write_text(json.dumps(config, indent=1))
    return path


def simulate(swf: Path, nodes: int, cores_per_node: int, out: Path) -> dict:
    """Run AccaSim's EASY backfilling (first-fit allocation) on ``swf``.

    Returns ``{"jobs", "simulation_seconds", "schedule"}``: jobs loaded, seconds spent in AccaSim's
    simulation call, and the path of ``schedule.csv`` (see the module docstring).
    Raises what AccaSim raises (e.g. a job wider than the machine fails its assertion).
    """
    out.mkdir(parents=True, exist_ok=True)
    config = write_system_config(out / "system.json", nodes, cores_per_node)
    simulator = Simulator(str(swf), str(config), EASYBackfilling(FirstFit()), RESULTS_FOLDER_PATH=str(out),
                          SCHEDULE_OUTPUT=SCHEDULE_OUTPUT, SCHED_PREFIX="sched-", scheduling_output=True,
                          statistics_output=False, show_statistics=False, LOG_LEVEL="WARNING")
    started = time.perf_counter()
    written = simulator.start_simulation()
    seconds = time.perf_counter() - started
    schedule = out / "schedule.csv"
    Path(written["sched-"]).replace(schedule)
    return {"jobs": simulator.loaded_jobs, "simulation_seconds": seconds, "schedule": str(schedule)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--swf", type=Path, required=True, help="SWF file (plain text: AccaSim reads no .gz)")
    parser.add_argument("--nodes", type=int, required=True, help="number of nodes")
    parser.add_argument("--cores-per-node", type=int, default=1, help="cores per node (default: 1)")
    parser.add_argument("--out", type=Path, required=True, help="folder for AccaSim's files")
    args = parser.parse_args()
    print(json.dumps(simulate(args.swf, args.nodes, args.cores_per_node, args.out)), flush=True)


if __name__ == "__main__":
    main()
