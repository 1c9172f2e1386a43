"""Invariants of the scheduling policies, checked with hypothesis on random workloads and on real KTH-SP2 jobs.

A tiny discrete-event loop, local to this file, plays Batsim's part: all submissions of one instant come in one
message, before the completions of that instant, and every completion comes in its own message (see
shared/docs/batsim-protocol-notes.md); the policy decides once per message. A job runs for its run time, which
does not exceed its walltime (Batsim stops a job at its walltime), except in the ``overrun`` workloads: there a
completion may come after the walltime, as when Batsim reports it a microsecond late.
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.schedulers.backfilling import Backfilling
from batreplay.schedulers.conservative import ConservativePolicy
from batreplay.schedulers.easy import EasyPolicy
from batreplay.schedulers.fcfs import FcfsPolicy
from batreplay.schedulers.policy import QueuedJob
from batreplay.schedulers.registry import FAMILY
from batreplay.schedulers.resource_pool import procset_of_runs, runs_of

TOLERANCE = 1e-6  # Batsim's time resolution, s


@dataclass(frozen=True)
class SimJob:
    id: str
    submit: float
    res: int
    walltime: float | None
    runtime: float


@dataclass
class Trace:
    nb_resources: int
    starts: dict[str, float] = field(default_factory=dict)
    allocations: dict[str, ProcSet] = field(default_factory=dict)
    start_order: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    first_reservation: dict[str, float] = field(default_factory=dict)


def simulate(policy, jobs: list[SimJob]) -> Trace:
    """Drive ``policy`` over ``jobs`` (sorted by submission time) and check, at every start, that the
    allocation has the requested size, overlaps no running job and is made of the lowest free ids."""
    nb = policy.nb_resources
    trace = Trace(nb)
    by_id = {job.id: job for job in jobs}
    busy: set[int] = set()
    running: list[tuple[float, int, str]] = []
    sequence = 0
    index = 0
    for _ in range(10 * len(jobs) + 10):
        if index >= len(jobs) and not running:
            break
        if index < len(jobs) and (not running or jobs[index].submit <= running[0][0]):
            now = jobs[index].submit
            while index < len(jobs) and jobs[index].submit == now:  # one message per submission instant
                job = jobs[index]
                rejection = policy.submit(QueuedJob(job.id, job.res, job.walltime))
                if rejection is not None:
                    trace.rejected.append(job.id)
                index += 1
        else:
            now, _, job_id = heapq.heappop(running)  # one message per completion
            assert policy.complete(job_id)
            busy.difference_update(trace.allocations[job_id])
        for queued, allocation in policy.decide(now):
            job = by_id[queued.id]
            assert job.id not in trace.starts, f"{job.id} started twice"
            assert now >= job.submit
            lowest = sorted(set(range(nb)) - busy)[: job.res]
            assert len(allocation) == job.res
            assert set(allocation) == set(lowest), f"{job.id}: {allocation} is not the lowest free ids {lowest}"
            busy.update(allocation)
            trace.starts[job.id] = now
            trace.allocations[job.id] = allocation
            trace.start_order.append(job.id)
            heapq.heappush(running, (now + job.runtime, sequence, job.id))
            sequence += 1
        record_reservations(policy, trace)
    else:
        pytest.fail("the simulation did not end (a job can never start?)")
    accepted = {job.id for job in jobs} - set(trace.rejected)
    assert set(trace.starts) == accepted, "every accepted job starts exactly once"
    assert policy.queue == ()
    assert policy.pool.nb_free == nb
    return trace


def record_reservations(policy, trace: Trace) -> None:
    if isinstance(policy, EasyPolicy):
        reservation = policy.reservation
        if reservation is not None:
            trace.first_reservation.setdefault(reservation.job_id, reservation.shadow_time)
    elif isinstance(policy, ConservativePolicy):
        for job in policy.queue:
            start = policy.reservation_of(job.id)
            if start is not None:
                trace.first_reservation.setdefault(job.id, start)


@st.composite
def workloads(
    draw,
    *,
    exact: bool = False,
    no_walltime: bool = False,
    scale: float = 1.0,
    oversized: bool = False,
    overrun: bool = False,
):
    """(number of nodes, jobs sorted by submission). Times are integers times ``scale``; run time <= walltime
    (== if ``exact``); a few jobs without walltime if ``no_walltime``; a few too wide jobs if ``oversized``; if
    ``overrun``, many jobs end after their walltime, by 1 us (a completion Batsim delivers a microsecond late, as
    with LANL-CM5) up to several seconds."""
    nb = draw(st.integers(1, 8))
    count = draw(st.integers(1, 24))
    jobs = []
    clock = 0
    for number in range(count):
        clock += draw(st.sampled_from([0, 0, 1, 2, 3, 5, 8]))
        res = draw(st.integers(1, nb + 1 if oversized and draw(st.integers(0, 4)) == 0 else nb))
        walltime = draw(st.integers(1, 20))
        runtime = walltime if exact else draw(st.integers(1, walltime))
        missing = no_walltime and draw(st.integers(0, 5)) == 0
        late = draw(st.sampled_from([0.0, 0.0, 1e-6, 1e-6, 0.5, 3.0])) if overrun else 0.0
        jobs.append(
            SimJob(f"w0!{number}", clock * scale, res, None if missing else walltime * scale, runtime * scale + late)
        )
    return nb, jobs


POLICIES = [FcfsPolicy, EasyPolicy, ConservativePolicy]


@given(ids=st.sets(st.integers(0, 300), max_size=60))
def test_allocation_procsets_equal_the_public_constructor(ids):
    ordered = sorted(ids)
    built = procset_of_runs(runs_of(ordered))
    assert built == ProcSet(*ordered)
    assert list(built) == ordered
    assert str(built) == str(ProcSet(*ordered))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=workloads(no_walltime=True, oversized=True))
@pytest.mark.parametrize("policy_class", POLICIES)
def test_every_job_starts_once_without_sharing_nodes(policy_class, data):
    nb, jobs = data
    trace = simulate(policy_class(nb), jobs)
    assert trace.rejected == [job.id for job in jobs if job.res > nb]


@SETTINGS
@given(data=workloads(scale=0.1, no_walltime=True))
@pytest.mark.parametrize("policy_class", POLICIES)
def test_invariants_hold_with_fractional_times(policy_class, data):
    nb, jobs = data
    simulate(policy_class(nb), jobs)


@SETTINGS
@given(data=workloads(no_walltime=True))
def test_fcfs_starts_jobs_in_submission_order(data):
    nb, jobs = data
    trace = simulate(FcfsPolicy(nb), jobs)
    assert trace.start_order == [job.id for job in jobs]
    times = [trace.starts[job.id] for job in jobs]
    assert times == sorted(times)


@SETTINGS
@given(data=workloads())
def test_easy_head_never_starts_after_its_reservation(data):
    nb, jobs = data
    trace = simulate(EasyPolicy(nb), jobs)
    for job_id, shadow in trace.first_reservation.items():
        assert trace.starts[job_id] <= shadow + TOLERANCE, job_id


@SETTINGS
@given(data=workloads(exact=True))
def test_easy_reservation_is_exact_when_runtimes_equal_walltimes(data):
    nb, jobs = data
    trace = simulate(EasyPolicy(nb), jobs)
    for job_id, shadow in trace.first_reservation.items():
        assert trace.starts[job_id] == pytest.approx(shadow, abs=TOLERANCE), job_id


@SETTINGS
@given(data=workloads(no_walltime=True, scale=0.1), order=st.sampled_from(["fcfs", "sjf", "ljf", "saf", "laf"]))
def test_easy_incremental_scan_equals_full_scan(data, order):
    """Also under other queue orders, where a new job may be inserted before the part already scanned."""
    nb, jobs = data
    incremental = simulate(EasyPolicy(nb, incremental=True, order=order), jobs)
    full = simulate(EasyPolicy(nb, incremental=False, order=order), jobs)
    assert incremental.start_order == full.start_order
    assert incremental.starts == full.starts
    assert incremental.allocations == full.allocations


@SETTINGS
@given(data=workloads())
def test_conservative_never_starts_a_job_after_its_first_reservation(data):
    nb, jobs = data
    trace = simulate(ConservativePolicy(nb), jobs)
    for job_id, reserved in trace.first_reservation.items():
        assert trace.starts[job_id] <= reserved + TOLERANCE, job_id


@SETTINGS
@given(data=workloads(exact=True, scale=0.1))
def test_conservative_reservations_are_exact_when_runtimes_equal_walltimes(data):
    nb, jobs = data
    trace = simulate(ConservativePolicy(nb), jobs)
    for job_id, reserved in trace.first_reservation.items():
        assert trace.starts[job_id] == pytest.approx(reserved, abs=TOLERANCE), job_id


class CheckedConservative(ConservativePolicy):
    """Conservative backfilling that checks, after every decision, that its availability profile never counts
    fewer than zero free nodes (reservations never overlap running jobs or each other beyond the platform)."""

    def decide(self, now):
        started = super().decide(now)
        profile = self._profile
        assert profile is not None
        assert min(profile.free) >= 0, list(zip(profile.times, profile.free))
        return started


#: The smallest state found by hypothesis before the fix: w0!0's completion comes 1 us after its walltime, so w0!1
#: starts 1 us after its reservation, and w0!2 (no walltime, reserved for w0!1's planned end) overlaps it.
OVERRUN_EXAMPLE = (1, [SimJob("w0!0", 0.0, 1, 1.0, 1.000001), SimJob("w0!1", 0.0, 1, 1.0, 1.0),
                       SimJob("w0!2", 0.0, 1, None, 1.0)])


@SETTINGS
@given(data=workloads(overrun=True, no_walltime=True))
@example(data=OVERRUN_EXAMPLE)
@pytest.mark.parametrize("policy_class", [FcfsPolicy, EasyPolicy, CheckedConservative])
def test_invariants_hold_when_jobs_end_after_their_walltime(policy_class, data):
    """LANL-CM5 under conservative backfilling: a job whose completion came 1 us after its walltime started 1 us
    after its reservation, and the reservation behind it, made for the planned end, overlapped it."""
    nb, jobs = data
    trace = simulate(policy_class(nb), jobs)
    submit = {job.id: job.submit for job in jobs}
    assert all(trace.starts[job_id] >= submit[job_id] for job_id in trace.starts)


# --------------------------------------------------------------------------------------------------------------
# Real jobs: the first 2000 KTH-SP2 jobs, as converted for the golden Batsim run `kth2000`
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kth2000(golden_dir):
    """(nodes, jobs): 100 nodes; run time = the delay profile, cut at the walltime as Batsim does."""
    workload = json.loads((golden_dir / "kth2000" / "workload.json").read_text())
    profiles = workload["profiles"]
    jobs = []
    for job in workload["jobs"]:
        delay = profiles[job["profile"]]["delay"]
        jobs.append(SimJob(f"w0!{job['id']}", job["subtime"], job["res"], job["walltime"], min(delay, job["walltime"])))
    jobs.sort(key=lambda job: job.submit)
    return workload["nb_res"], jobs


def mean_wait(trace: Trace, jobs: list[SimJob]) -> float:
    return sum(trace.starts[job.id] - job.submit for job in jobs) / len(jobs)


def test_real_kth_jobs_under_the_three_policies(kth2000):
    nb, jobs = kth2000
    fcfs = simulate(FcfsPolicy(nb), jobs)
    easy = simulate(EasyPolicy(nb), jobs)
    conservative = simulate(ConservativePolicy(nb), jobs)
    assert fcfs.start_order == [job.id for job in jobs]
    assert all(easy.starts[j] <= s + TOLERANCE for j, s in easy.first_reservation.items())
    assert all(conservative.starts[j] <= s + TOLERANCE for j, s in conservative.first_reservation.items())
    # Backfilling exists to cut waiting times; on a real log both variants must beat plain FCFS, and EASY
    # must have started some jobs out of submission order.
    assert mean_wait(easy, jobs) < mean_wait(fcfs, jobs)
    assert mean_wait(conservative, jobs) < mean_wait(fcfs, jobs)
    assert easy.start_order != fcfs.start_order


# --------------------------------------------------------------------------------------------------------------
# The whole backfilling family, including jobs without walltime, too wide ones and completions after the walltime
# --------------------------------------------------------------------------------------------------------------

FAMILY_MEMBERS = {**FAMILY, "depth 2": Backfilling("fcfs", 2), "depth 3, saf, sjf backfill": Backfilling("saf", 3, "sjf")}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=workloads(no_walltime=True, oversized=True, overrun=True))
@pytest.mark.parametrize("name", list(FAMILY_MEMBERS))
def test_family_members_start_every_job_once_without_sharing_nodes(name, data):
    nb, jobs = data
    trace = simulate(FAMILY_MEMBERS[name].policy(nb), jobs)
    submit = {job.id: job.submit for job in jobs}
    assert all(trace.starts[job_id] >= submit[job_id] for job_id in trace.starts)


@SETTINGS
@given(data=workloads(no_walltime=True), order=st.sampled_from(["sjf", "ljf", "saf", "laf"]))
def test_strict_order_members_start_each_job_only_when_no_earlier_job_in_the_order_waits(data, order):
    """Depth 0: a decision starts a prefix of the queue order, so every job left waiting comes after every job
    started, and nothing starts while the head does not fit."""
    nb, jobs = data
    policy = Backfilling(order, 0).policy(nb)
    original = policy.decide
    key = {"sjf": lambda j: (j.walltime or float("inf")), "ljf": lambda j: -(j.walltime or float("inf")),
           "saf": lambda j: j.requested_resources * (j.walltime or float("inf")),
           "laf": lambda j: -j.requested_resources * (j.walltime or float("inf"))}[order]

    def checked(now):
        started = original(now)
        waiting = policy.queue
        if started and waiting:
            assert max(key(job) for job, _ in started) <= min(key(job) for job in waiting)
        if waiting:
            assert waiting[0].requested_resources > policy.pool.nb_free
        return started

    policy.decide = checked
    simulate(policy, jobs)
