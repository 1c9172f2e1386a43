"""Random job launch and completion overheads: repetitions of one experiment (Baranov et al. 2018, sections VI, VIII).

Baranov et al. (2018, section VI) split a job's real processing time ``w_i`` into a launch time ``a_i``, an execution
time ``b_i`` and a completion time ``c_i``, and note that ``a_i`` and ``c_i`` are random: they vary from one launch of
the same job to the next, so two runs of the same experiment on a real system do not give the same schedule. Their
reference value of the adequacy measure, ``P_ideal`` (section VIII, Table I), is the measure P between two such
repetitions: a model whose P against the log is no larger cannot be told from the real system.

A simulator repeats itself exactly, so batreplay plays the repetitions by drawing the overheads: with
``--overheads MAX`` every job of a converted SWF log gets a launch overhead and a completion overhead, each drawn
uniformly on ``[0, MAX]`` seconds (rounded to the millisecond), independently, with ``numpy.random.default_rng(
--overhead-seed)``, in the order of the jobs simulated. The job's profile becomes a composed one: a delay of its
launch overhead, its converted profile, a delay of its completion overhead. The overheads are seconds whatever the
node speed of the platform (they are not computation); the execution follows the node speed as without overheads.
The walltime (the requested time ``e_i``, which P needs equal in both streams) is unchanged: a job whose run plus
overheads passes it is killed there; the notes count such jobs on a platform of the recorded node speed. Two runs
that differ only by ``--overhead-seed`` are two repetitions of one experiment. Rigid replays only: Batsim 4.2.1 does
not link a dynamically registered composed profile to its steps (:class:`batreplay.run.spec.RunSpec` refuses the
others).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from batreplay.workloads.batsim_workload import json_flop, value_label


@dataclass(frozen=True)
class JobOverheads:
    """The overheads' distribution: launch and completion each uniform on ``[0, max_seconds]`` s, seeded.

    Attributes:
        max_seconds: the largest launch (and completion) overhead, s (> 0).
        seed: the seed of the draws.
    """

    max_seconds: float
    seed: int

    def draw(self, nb_jobs: int) -> tuple[np.ndarray, np.ndarray]:
        """The launch and the completion overhead of each of ``nb_jobs`` jobs, float ``(nb_jobs,)`` each, s, rounded
        to the millisecond (launch overheads drawn first, then completion ones)."""
        rng = np.random.default_rng(self.seed)
        launch = np.round(rng.uniform(0.0, self.max_seconds, nb_jobs), 3)
        completion = np.round(rng.uniform(0.0, self.max_seconds, nb_jobs), 3)
        return launch, completion

    def describe(self) -> str:
        """The distribution, in words, for notes and documents."""
        return (f"launch and completion overheads each uniform on [0, {self.max_seconds:g}] s "
                f"(seed {self.seed}, Baranov et al. 2018, section VI)")


def _delay_profile(profiles: dict[str, dict[str, Any]], seconds: float) -> str | None:
    """The name of the delay profile of ``seconds`` (added to ``profiles``), None for no delay (0 s)."""
    if seconds <= 0:
        return None
    name = f"overhead_{value_label(seconds)}"
    profiles[name] = {"type": "delay", "delay": json_flop(seconds)}
    return name


def apply_overheads(document: dict, job_table: pd.DataFrame, overheads: JobOverheads) -> tuple[dict, list[str]]:
    """The workload ``document`` (a converted SWF log, its jobs in the order of ``job_table``'s rows) with each job's
    profile run between a delay of its launch overhead and one of its completion overhead; and the notes to print.

    Args:
        job_table: the converter's job table (``run_time`` and ``walltime`` in s, ``profile``); its ``profile`` column
            is updated and ``launch_overhead`` and ``completion_overhead`` columns (s) added, in place.

    Returns:
        ``(document, notes)``: the converted profiles, the delays ``overhead_<s>`` and one composed profile
        ``with_overheads_<launch>_<profile>_<completion>`` per distinct triple; two notes: the distribution drawn,
        and the jobs whose run time and overheads pass their walltime on a platform of the recorded node speed.
    """
    launch, completion = overheads.draw(len(job_table))
    profiles = dict(document["profiles"])
    names = []
    for before, base, after in zip(launch.tolist(), job_table["profile"].tolist(), completion.tolist()):
        steps = [step for step in (_delay_profile(profiles, before), base, _delay_profile(profiles, after)) if step]
        name = f"with_overheads_{value_label(before)}_{base}_{value_label(after)}"
        profiles[name] = {"type": "composed", "seq": steps, "repeat": 1}
        names.append(name)
    for job, name in zip(document["jobs"], names):
        job["profile"] = name
    job_table["profile"] = names
    job_table["launch_overhead"], job_table["completion_overhead"] = launch, completion
    run_time, walltime = job_table["run_time"].to_numpy(dtype=np.float64), job_table["walltime"].to_numpy(np.float64)
    past = int(((walltime > 0) & (run_time + launch + completion > walltime) & (run_time <= walltime)).sum())
    mean = float((launch + completion).mean()) if len(launch) else 0.0
    notes = [f"job overheads: {overheads.describe()}: {len(launch)} jobs, {mean:.1f} s each on average",
             f"job overheads: on a platform of the recorded node speed, {past} jobs run past their walltime with them "
             "(killed there; their run time alone fitted)"]
    return dict(document, profiles=profiles), notes
