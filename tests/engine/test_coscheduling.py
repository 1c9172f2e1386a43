"""Co-scheduling with a speedup model (the co-scheduling simulator of ``../shared/seeds/002_876b126a4edf8075.txt``).

Its two equations, computed by hand: a job's speedup is the worst over the jobs it shares a host with (eq. 1), and
its remaining time is rescaled by ``speedup_n / speedup_{n+1}`` whenever that changes (eq. 2). The paper's figure:
A shares hosts with B and C, C with D. Then a neighbour that ends mid-run, the three shipped models, and the errors.
"""

from __future__ import annotations

import json

import pytest
from batsim.batsim import BatsimScheduler
from procset import ProcSet

from batreplay.engine.coscheduling import CoScheduledHosts
from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.sharing import SharedTask
from batreplay.engine.simulator import BatsimEngine, EngineError, EngineOptions
from batreplay.platforms.speedup import (
    NoSpeedup,
    RandomSpeedup,
    SpeedupModelError,
    TableSpeedup,
    make_speedup_model,
)
from batreplay.formats.out_jobs_writer import jobs_frame

GFLOP = 1e9
#: getSpeedup(job, neighbour) of the figure's example, chosen by hand.
PAIRS = {("A", "B"): 0.8, ("A", "C"): 0.9, ("B", "A"): 1.25, ("C", "A"): 0.5, ("C", "D"): 1.1, ("D", "C"): 0.95}


class PairTable:
    """A speedup model given as a dict of job-name pairs (a model of the user's own: any object with the two
    methods of the SpeedupModel protocol)."""

    def speedup(self, job, neighbour):
        return PAIRS[(job["id"].split("!")[-1].split(":")[-1], neighbour["id"].split("!")[-1].split(":")[-1])]

    def check_job(self, job):
        pass


def figure_tasks():
    """A on hosts 0-1, B on host 0, C on hosts 1-2, D on host 2 (1 Gflop/s each); every task 100 s alone."""
    return {name: SharedTask({h: 100 * GFLOP for h in hosts}, job={"id": f"w0!{name}"})
            for name, hosts in (("A", (0, 1)), ("B", (0,)), ("C", (1, 2)), ("D", (2,)))}


def test_figure_speedups_are_the_worst_neighbour():
    hosts = CoScheduledHosts([GFLOP] * 3, PairTable())
    tasks = figure_tasks()
    for task in tasks.values():
        hosts.add(task)
    # eq. 1: A = min(A|B, A|C), B = B|A, C = min(C|A, C|D), D = D|C
    assert {name: task.speedup for name, task in tasks.items()} == {"A": 0.8, "B": 1.25, "C": 0.5, "D": 0.95}
    # the rate: 1/100 of the task per second alone, times the speedup
    assert tasks["A"].rate == pytest.approx(0.8 / 100, rel=1e-15)
    assert tasks["B"].rate == pytest.approx(1.25 / 100, rel=1e-15)


def test_removing_a_neighbour_rates_again_only_its_neighbours():
    hosts = CoScheduledHosts([GFLOP] * 3, PairTable())
    tasks = figure_tasks()
    for task in tasks.values():
        hosts.add(task)
    changed = hosts.remove(tasks["B"])
    assert [t.job["id"] for t in changed] == ["w0!A"]
    assert tasks["A"].speedup == 0.9  # only C is left beside A
    changed = hosts.remove(tasks["A"])
    assert [t.job["id"] for t in changed] == ["w0!C"]
    assert tasks["C"].speedup == 1.1
    hosts.remove(tasks["D"])
    assert tasks["C"].speedup == 1.0  # alone: the compact execution time again


class StartAtOnce(BatsimScheduler):
    """Starts each job on submission on the hosts its id names (``"h0-1:A"``)."""

    def onJobSubmission(self, job):
        job.allocation = ProcSet.from_str(job.id.split("!", 1)[1].split(":", 1)[0][1:])
        self.bs.execute_jobs([job])

    def onJobCompletion(self, job):
        pass


def figure_engine(model, seconds=None, subtimes=None, extra=None):
    seconds = seconds or {"A": 100, "B": 50, "C": 100, "D": 100}
    subtimes = subtimes or {}
    jobs, profiles = [], {}
    for name, hosts in (("A", "0-1"), ("B", "0"), ("C", "1-2"), ("D", "2")):
        profiles[name] = {"type": "parallel_homogeneous", "cpu": seconds[name] * GFLOP, "com": 0}
        job = {"id": f"h{hosts}:{name}", "subtime": subtimes.get(name, 0), "walltime": -1,
               "res": len(ProcSet.from_str(hosts)), "profile": name}
        job.update((extra or {}).get(name, {}))
        jobs.append(job)
    return BatsimEngine([(f"node_{i}", GFLOP) for i in range(3)], {"w0": {"jobs": jobs, "profiles": profiles}},
                        options=EngineOptions(speedup_model=model))


def ends(engine) -> dict[str, float]:
    out = jobs_frame(engine.records)
    return {job_id.split(":")[-1]: finish for job_id, finish in zip(out["job_id"], out["finish_time"])}


def test_a_neighbour_ending_mid_run_rescales_the_remaining_time():
    """All four start at t = 0. B (50 s alone) runs at 1.25 and ends at 40 s. A, at 0.8 until then, has done 32 of
    its 100 s; with its new speedup 0.9 (C only), eq. 2 leaves 68 / 0.9 s: A ends at 115.56 s. D runs at 0.95 beside
    C: 105.26 s. C keeps 0.5 while A runs (D's leaving changes nothing: min(C|A) = 0.5), has done 57.78 s when A
    ends, then runs alone (speedup 1): it ends at 157.78 s."""
    engine = figure_engine(PairTable())
    run_scheduler(engine, StartAtOnce())
    got = ends(engine)
    assert got["B"] == pytest.approx(50 / 1.25, abs=1e-6)
    a_end = 40 + (100 - 0.8 * 40) / 0.9
    assert got["A"] == pytest.approx(a_end, abs=1e-6)
    # D runs at 0.95 beside C all along: 100 / 0.95 = 105.26 s, before A ends
    d_end = 100 / 0.95
    assert got["D"] == pytest.approx(d_end, abs=1e-6)
    # C: 0.5 beside A (and D) until A ends at a_end, except that D ends first; C's speedup stays min(C|A) = 0.5
    # while A runs, then 1 alone (D gone too)
    c_done = 0.5 * a_end
    assert got["C"] == pytest.approx(a_end + (100 - c_done) / 1.0, abs=1e-6)


def test_none_model_is_compact_execution():
    engine = figure_engine(make_speedup_model("none"))
    run_scheduler(engine, StartAtOnce())
    assert ends(engine) == {"A": 100.0, "B": 50.0, "C": 100.0, "D": 100.0}


def test_table_model_by_job_class(tmp_path):
    table = tmp_path / "speedups.csv"
    table.write_text("job_class,neighbour_class,speedup\ncompute,compute,0.9\ncompute,memory,1.0\n"
                     "memory,compute,0.8\nmemory,memory,0.5\n")
    model = make_speedup_model("table", {"table": str(table), "default_class": "compute"})
    # A and C are memory-bound; B and D compute-bound (the default)
    engine = figure_engine(model, extra={"A": {"class": "memory"}, "C": {"class": "memory"}})
    run_scheduler(engine, StartAtOnce())
    got = ends(engine)
    # B beside A: compute|memory = 1.0 -> 50 s; D beside C: 1.0 -> 100 s
    assert got["B"] == pytest.approx(50.0, abs=1e-6) and got["D"] == pytest.approx(100.0, abs=1e-6)
    # A: min(memory|compute (B) = 0.8, memory|memory (C) = 0.5) = 0.5 all along -> 200 s (B and D leave earlier,
    # C stays until A ends); C: min(memory|memory (A) = 0.5, memory|compute (D) = 0.8) = 0.5 -> 200 s
    assert got["A"] == pytest.approx(200.0, abs=1e-6) and got["C"] == pytest.approx(200.0, abs=1e-6)


def test_table_model_refuses_bad_tables_and_unknown_classes(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("job_class,neighbour_class,speedup\na,a,1\na,b,zero\nb,a,1\nb,b,1\n")
    with pytest.raises(SpeedupModelError, match=r"t.csv:3: column 'speedup': 'zero'"):
        TableSpeedup(table)
    table.write_text("job_class,neighbour_class,speedup\na,a,1\na,b,1\nb,a,1\n")
    with pytest.raises(SpeedupModelError, match=r"no speedup for the pair\(s\) \(b, b\)"):
        TableSpeedup(table)
    table.write_text("job_class,neighbour_class,speedup\na,a,1\n")
    model = TableSpeedup(table)
    with pytest.raises(EngineError, match="job 'w0!h0-1:A' has no property 'class'"):
        figure_engine(model)  # refused before anything runs
    with pytest.raises(SpeedupModelError, match="unknown option.*tabel"):
        make_speedup_model("table", {"tabel": str(table)})
    with pytest.raises(SpeedupModelError, match="unknown speedup model 'fast'"):
        make_speedup_model("fast")


def test_table_model_classes_by_a_rule_on_a_field(tmp_path):
    """class_rule: a job whose field is below the threshold gets class ``below``, the others ``above``; a rule
    with a key missing, a class the table lacks, or a job whose field is not a number is an error."""
    table = tmp_path / "t.csv"
    table.write_text("job_class,neighbour_class,speedup\nsmall,small,0.9\nsmall,wide,1.2\nwide,small,0.8\n"
                     "wide,wide,0.5\n")
    rule = {"field": "res", "threshold": 4, "below": "small", "above": "wide"}
    model = make_speedup_model("table", {"table": str(table), "class_rule": rule})
    narrow, wide = {"id": "w0!1", "res": 3}, {"id": "w0!2", "res": 4}
    assert (model.kind(narrow), model.kind(wide)) == ("small", "wide")
    assert model.speedup(narrow, wide) == 1.2 and model.speedup(wide, narrow) == 0.8
    with pytest.raises(SpeedupModelError, match="exactly the keys field, threshold, below, above"):
        TableSpeedup(table, class_rule={"field": "res", "threshold": 4, "below": "small"})
    with pytest.raises(SpeedupModelError, match="threshold nan is not a finite number"):
        TableSpeedup(table, class_rule={**rule, "threshold": float("nan")})
    with pytest.raises(SpeedupModelError, match="above = 'huge' is not a class"):
        TableSpeedup(table, class_rule={**rule, "above": "huge"})
    with pytest.raises(SpeedupModelError, match="job 'w0!3': field 'res' = None is not a number"):
        model.check_job({"id": "w0!3"})


def test_random_model_is_seeded_and_order_free():
    first, second = RandomSpeedup(seed=3), RandomSpeedup(seed=3)
    a, b = {"id": "w0!1"}, {"id": "w0!2"}
    forward = [first.speedup(a, b), first.speedup(b, a)]
    backward = [second.speedup(b, a), second.speedup(a, b)][::-1]
    assert forward == backward and forward[0] != forward[1]
    assert all(0.5 <= value <= 1.5 for value in forward)
    assert RandomSpeedup(seed=4).speedup(a, b) != forward[0]
    with pytest.raises(SpeedupModelError, match="0 < low <= high"):
        RandomSpeedup(low=0.0)


def test_a_model_returning_zero_is_an_error():
    class Broken(NoSpeedup):
        def speedup(self, job, neighbour):
            return 0.0

    engine = figure_engine(Broken())
    with pytest.raises(Exception, match="Broken gave 0.0 for job 'w0!h0:B' beside 'w0!h0-1:A'"):
        run_scheduler(engine, StartAtOnce())


def test_simulation_begins_says_hosts_are_shared():
    engine = figure_engine(NoSpeedup())
    begins = engine.next_request()["events"][0]
    assert begins["type"] == "SIMULATION_BEGINS" and begins["data"]["allow_compute_sharing"] is True
    json.dumps(begins)


def test_run_command_with_a_speedup_table(tmp_path):
    """``batreplay run --speedup-model table``: the golden ``sharing`` workload with its probe scheduler (several
    jobs per host); with every speedup 1, each job takes its compact time (its time alone) whatever its neighbours,
    and the run directory records the model; a bad table is a one-line error naming its file and line, and leaves
    no run directory."""
    import subprocess
    import sys

    import pandas as pd
    from conftest import GOLDEN_SHARING

    folder = GOLDEN_SHARING / "sharing"
    table = tmp_path / "ones.csv"
    table.write_text("job_class,neighbour_class,speedup\nany,any,1\n")
    command = [sys.executable, "-m", "batreplay.cli", "run", "--quiet", "--workload", str(folder / "workload.json"),
               "--platform", str(folder / "platform.xml"), "--scheduler", str(folder / "probeShare.py"),
               "--speedup-model", "table", "--speedup-options",
               json.dumps({"table": str(table), "default_class": "any"}), "--out", str(tmp_path / "run")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    jobs = pd.read_csv(tmp_path / "run" / "out_jobs.csv").set_index("job_id")
    workload = json.loads((folder / "workload.json").read_text())
    for job in workload["jobs"]:
        profile = workload["profiles"][job["profile"]]
        alone = profile["delay"] if profile["type"] == "delay" else max(
            profile["cpu"] if isinstance(profile["cpu"], list) else [profile["cpu"]]) / GFLOP
        expected = min(alone, job["walltime"])
        assert jobs.loc[job["id"], "execution_time"] == pytest.approx(expected, abs=1e-5), job["id"]
    spec = json.loads((tmp_path / "run" / "run.json").read_text())["spec"]
    assert spec["speedup_model"] == "table" and spec["speedup_options"]["default_class"] == "any"

    table.write_text("job_class,neighbour_class,speedup\nany,any,-2\n")
    done = subprocess.run([*command[:-1], str(tmp_path / "bad")], capture_output=True, text=True)
    assert done.returncode != 0
    assert f"{table}:2: column 'speedup': '-2' is not a number > 0" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()


@pytest.mark.parametrize("max_jobs", [3000, pytest.param(None, marks=pytest.mark.slow)])
def test_none_model_without_sharing_changes_nothing_on_kth(max_jobs, tmp_path):
    """Co-scheduling with the none model and no node shared writes today's out_jobs.csv, byte for byte, on KTH-SP2
    (first 3,000 jobs; the whole log, slow): EASY with and without --speedup-model none, and easy-coscheduling
    keeping one job per node."""
    from batreplay.run.runner import RunSpec, run
    from conftest import WORKLOADS

    common = {"workload": WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz", "platform": "kth-sp2", "max_jobs": max_jobs}
    run(RunSpec.build(scheduler="easy", out_dir=tmp_path / "today", **common))
    run(RunSpec.build(scheduler="easy", out_dir=tmp_path / "none", speedup_model="none", **common))
    run(RunSpec.build(scheduler="easy-coscheduling", out_dir=tmp_path / "cos", speedup_model="none",
                      scheduler_options={"jobs_per_node": 1}, **common))
    today = (tmp_path / "today" / "out_jobs.csv").read_bytes()
    assert len(today.splitlines()) > 2900
    assert (tmp_path / "none" / "out_jobs.csv").read_bytes() == today
    assert (tmp_path / "cos" / "out_jobs.csv").read_bytes() == today
