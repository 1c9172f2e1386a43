"""Speed of the scheduling environment (run by hand; figures go in README.md and notes): environment steps per
second and episodes per second on windows of 1,000 KTH-SP2 jobs, in one process and vectorised on 2 cores, beside a
peer environment that drives a real Batsim over ZeroMQ (batsim-py, the base of GridGym) on the same jobs.

Every episode plays the policy ``first`` (the first waiting job when it fits, else wait: FCFS). The windows are
the same for every configuration: ``--episodes`` windows spread evenly over the log.

Usage:

    uv run python benchmarks/bench_gym.py --out /tmp/bench-gym [--peer-python /tmp/peer/.venv/bin/python]

With ``--peer-python``, the peer runs in that interpreter (``benchmarks/peer_batsim_py.py``), on the windows
written into ``--out`` as Batsim workloads and on a copy of ``kth-sp2.xml`` with the energy properties batsim-py
needs (it starts Batsim with ``-E``). batsim-py 1.0.5 pins pandas 0.25.3 and a placeholder ``zmq`` package, neither
installable on Python 3.11; its environment is made with:

    uv venv /tmp/peer/.venv -p 3.11
    uv pip install -p /tmp/peer/.venv/bin/python --no-deps batsim-py==1.0.5
    uv pip install -p /tmp/peer/.venv/bin/python pandas pyzmq procset numpy

and it needs ``batsim`` (4.2.1 here) on PATH. What a step is differs: here, one choice of the agent (several at one
instant when several jobs start); for batsim-py, one ``proceed_time()`` to Batsim's next event, the FCFS rule
starting every job it can before it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import gymnasium
import numpy as np

from batreplay.gym.environment import SchedulingEnv
from batreplay.platforms.generate import XML_HEADER
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.schedulers.agent import first_waiting_job

HERE = Path(__file__).resolve().parent
KTH = HERE.parent.parent / "shared" / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"  # the default --workload
#: Host properties batsim-py's ``-E`` makes Batsim require (SimGrid's energy plugin), with no sleep state.
ENERGY = {"wattage_per_state": "100.0:200.0", "wattage_off": "10.0"}
#: Seconds the peer may take (batsim-py waits forever for a Batsim that stopped).
PEER_TIMEOUT = 1800


def single(env: SchedulingEnv, starts: list[int]) -> tuple[int, float]:
    """Steps and seconds of one episode per start, one after the other."""
    steps, began = 0, time.perf_counter()
    for start in starts:
        _observation, info = env.reset(options={"start": start})
        done = False
        while not done:
            _observation, _reward, terminated, truncated, info = env.step(first_waiting_job(None, info["action_mask"]))
            steps += 1
            done = terminated or truncated
    return steps, time.perf_counter() - began


class WindowSequence(gymnasium.Wrapper):
    """Each reset starts the next window of ``starts`` (cycling), whatever the reset's options."""

    def __init__(self, env: SchedulingEnv, starts: list[int]) -> None:
        super().__init__(env)
        self.starts, self.next = starts, 0

    def reset(self, *, seed=None, options=None):
        start = self.starts[self.next % len(self.starts)]
        self.next += 1
        return self.env.reset(seed=seed, options={"start": start})


def sub_environment(workload: Path, starts: list[int], jobs: int):
    """A factory of one sub-environment playing ``starts`` (for the vector environments)."""
    return lambda: WindowSequence(SchedulingEnv(workload, "kth-sp2", jobs=jobs), starts)


def vectorised(workload: Path, starts: list[int], jobs: int, mode: str) -> tuple[int, int, float]:
    """Steps, episodes ended and seconds until the windows of ``starts`` (every other one on each of 2
    sub-environments, ``mode`` sync or async) all ended; a sub-environment done first goes on with its windows again
    meanwhile (its steps and episodes count: work done in that time)."""
    factories = [sub_environment(workload, starts[0::2], jobs), sub_environment(workload, starts[1::2], jobs)]
    envs = (gymnasium.vector.AsyncVectorEnv(factories) if mode == "async"
            else gymnasium.vector.SyncVectorEnv(factories))
    began = time.perf_counter()
    _observations, infos = envs.reset()
    planned = np.array([len(starts[0::2]), len(starts[1::2])])
    ended = np.zeros(2, dtype=int)
    steps = 0
    resetting = np.zeros(2, dtype=bool)  # the next step() resets these (autoreset): not a step of theirs
    while (ended < planned).any():
        actions = np.where(infos["action_mask"][:, 0], 0, infos["action_mask"].shape[1] - 1)
        _observations, _rewards, terminated, truncated, infos = envs.step(actions)
        steps += int((~resetting).sum())
        resetting = terminated | truncated
        ended += resetting
    seconds = time.perf_counter() - began
    envs.close()
    return steps, int(ended.sum()), seconds


def peer(python: str, out: Path, starts: list[int], jobs: int, env: SchedulingEnv) -> dict:
    """The peer on the same windows (workloads and platform written into ``out``); its JSON result."""
    document = env.source.document
    workloads = []
    for start in starts:
        path = out / f"window-{start}.json"
        path.write_text(json.dumps({**document, "jobs": document["jobs"][start:start + jobs]}))
        workloads.append(str(path))
    platform = out / "kth-sp2-energy.xml"
    tree = ElementTree.parse(SHIPPED_PLATFORMS["kth-sp2"])
    for cluster in tree.iter("cluster"):
        for name, value in ENERGY.items():
            ElementTree.SubElement(cluster, "prop", id=name, value=value)
    # (SimGrid requires the DOCTYPE, which ElementTree does not write)
    platform.write_text(XML_HEADER + ElementTree.tostring(tree.getroot(), encoding="unicode"))
    result = subprocess.run([python, str(HERE / "peer_batsim_py.py"), str(platform), *workloads], check=True,
                            capture_output=True, text=True, cwd=out, timeout=PEER_TIMEOUT)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="a new folder for the peer's inputs")
    parser.add_argument("--workload", type=Path, default=KTH, help="the KTH-SP2 log (default: ../shared's)")
    parser.add_argument("--episodes", type=int, default=8, help="windows played by each configuration")
    parser.add_argument("--jobs", type=int, default=1000, help="jobs of a window")
    parser.add_argument("--peer-python", help="an interpreter with batsim-py installed (see the docstring)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=False)
    began = time.perf_counter()
    env = SchedulingEnv(args.workload, "kth-sp2", jobs=args.jobs)
    print(f"log read and converted once in {time.perf_counter() - began:.2f} s ({env.source.size:,} jobs)")
    starts = [int(value) for value in np.linspace(0, env.source.size - args.jobs, args.episodes)]
    rows = []
    steps, seconds = single(env, starts)
    rows.append(("batreplay, 1 process", steps, len(starts), seconds))
    for mode in ("sync", "async"):
        steps, episodes, seconds = vectorised(args.workload, starts, args.jobs, mode)
        rows.append((f"batreplay, 2 sub-environments ({mode})", steps, episodes, seconds))
    if args.peer_python:
        result = peer(args.peer_python, args.out, starts, args.jobs, env)
        rows.append(("batsim-py + real Batsim 4.2.1, 1 process", result["steps"], result["episodes"],
                     result["seconds"]))
    print(f"{len(starts)} windows of {args.jobs:,} KTH-SP2 jobs, policy first (FCFS)")
    print("| environment | steps | episodes | seconds | steps/s | episodes/s |")
    print("|---|---|---|---|---|---|")
    for name, steps, episodes, seconds in rows:
        print(f"| {name} | {steps:,} | {episodes} | {seconds:.2f} | {steps / seconds:,.0f} "
              f"| {episodes / seconds:.2f} |")


if __name__ == "__main__":
    main()
