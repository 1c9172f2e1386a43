"""Random job launch and completion overheads: repetitions of one experiment (Baranov et al. 2018, sections VI, VIII).

Baranov et al. (2018, section VI) split a job's real processing time ``w_i`` into a launch time ``a_i``, an execution
time ``b_i`` and a completion time ``c_i``, and note that ``a_i`` and ``c_i`` are random: they vary from one launch of
the same job to the next, so two runs of the same experiment on a real system do not give the same schedule. Their
reference value of the adequacy measure, ``P_ideal`` (section VIII, Table I), is the measure P between two such
repetitions: a model whose P against the log is no larger cannot be told from the real system.

A simulator repeats itself exactly, so batreplay plays the repetitions by drawing the overheads: with
``--overheads MAX`` every job of a converted SWF log gets a launch overhead and a completion overhead, each drawn
uniformly on ``[0, MAX]`` seconds (rounded to the millisecond), independently, with ``numpy.random.default_rng(
--overhead-seed)``, in the order of the jobs simulated. The job then runs for its recorded run time plus both
overheads (its profile is rebuilt as the converter builds one from a run time, so on a platform of other node speed
the overheads scale with the run time). Its walltime (the requested time ``e_i``, which P needs equal in both
streams) is unchanged: a job whose run time plus overheads passes it is killed there, and such jobs are counted in
the notes. Two runs that differ only by ``--overhead-seed`` are two repetitions of one experiment.
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

    def draw(self, nb_jobs: int) -> np.ndarray:
        """Launch + completion overhead of each of ``nb_jobs`` jobs, float ``(nb_jobs,)``, s, each part rounded to
        the millisecond."""
        rng = np.random.default_rng(self.seed)
        launch = np.round(rng.uniform(0.0, self.max_seconds, nb_jobs), 3)
        completion = np.round(rng.uniform(0.0, self.max_seconds, nb_jobs), 3)
        return launch + completion

    def describe(self) -> str:
        """The distribution, in words, for notes and documents."""
        return (f"launch and completion overheads each uniform on [0, {self.max_seconds:g}] s "
                f"(seed {self.seed}, Baranov et al. 2018, section VI)")


def apply_overheads(document: dict, job_table: pd.DataFrame, overheads: JobOverheads,
                    node_speed: float | None) -> tuple[dict, list[str]]:
    """The workload ``document`` (a converted SWF log, its jobs in the order of ``job_table``'s rows) with each job's
    profile lasting its run time plus its drawn overheads; and the notes to print.

    Args:
        job_table: the converter's job table (``run_time`` and ``walltime`` in s); its ``profile`` column is updated
            and an ``overhead`` column (s) added, in place.
        node_speed: flop/s of a node of the recorded machine (``parallel_homogeneous`` profiles), None for delay
            profiles.

    Returns:
        ``(document, notes)``: one profile per distinct duration (``delay_<s>`` or ``ph_<s>``, as the converter
        names them), and two notes: the distribution drawn and the jobs it makes run past their walltime.
    """
    drawn = overheads.draw(len(job_table))
    duration = job_table["run_time"].to_numpy(dtype=np.float64) + drawn
    distinct, inverse = np.unique(duration, return_inverse=True)
    prefix = "delay_" if node_speed is None else "ph_"
    names = [prefix + value_label(float(value)) for value in distinct.tolist()]
    profiles: dict[str, dict[str, Any]] = {}
    for name, value in zip(names, distinct.tolist()):
        profiles[name] = ({"type": "delay", "delay": json_flop(value)} if node_speed is None else
                          {"type": "parallel_homogeneous", "cpu": json_flop(value * node_speed), "com": 0})
    job_profiles = [names[k] for k in np.asarray(inverse).reshape(-1).tolist()]
    for job, name in zip(document["jobs"], job_profiles):
        job["profile"] = name
    job_table["profile"] = job_profiles
    job_table["overhead"] = drawn
    walltime = job_table["walltime"].to_numpy(dtype=np.float64)
    past = int(((walltime > 0) & (duration > walltime) & (job_table["run_time"].to_numpy() <= walltime)).sum())
    notes = [f"job overheads: {overheads.describe()}: {len(drawn)} jobs, {float(drawn.mean()) if len(drawn) else 0:.1f} "
             "s each on average",
             f"job overheads: {past} jobs now run past their walltime (killed there; their run time alone fitted)"]
    return dict(document, profiles=profiles), notes
