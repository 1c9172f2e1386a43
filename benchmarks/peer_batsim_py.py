"""The peer of bench_gym.py, run in an interpreter with batsim-py: FCFS on each workload given, with a real Batsim
driven over ZeroMQ, one ``proceed_time()`` (to Batsim's next event) per step. Prints one JSON line: steps, episodes,
seconds (Batsim's start and stop included: part of an episode).

Usage: python peer_batsim_py.py PLATFORM WORKLOAD...
"""

import json
import sys
import time

from batsim_py import SimulatorHandler


def episode(platform: str, workload: str) -> int:
    """One simulation; its number of steps."""
    simulator = SimulatorHandler()
    simulator.start(platform, workload, "quiet")
    steps = 0
    while simulator.is_running:
        for job in simulator.queue:  # FCFS: start jobs from the head while they fit
            free = simulator.platform.get_not_allocated_hosts()
            if job.res > len(free):
                break
            simulator.allocate(job.id, [host.id for host in free[:job.res]])
        simulator.proceed_time()
        steps += 1
    return steps


def main() -> None:
    platform, workloads = sys.argv[1], sys.argv[2:]
    began = time.perf_counter()
    steps = sum(episode(platform, workload) for workload in workloads)
    print(json.dumps({"steps": steps, "episodes": len(workloads), "seconds": time.perf_counter() - began}))


if __name__ == "__main__":
    main()
