"""Schedulers: hand-computed FCFS / EASY / conservative scenarios on the policies, the pybatsim adapters driven
through a fake ``bs``, replays of real Batsim transcripts through pybatsim's own ``Batsim`` class, loading by the
pybatsim launcher and the registry.

Every expected start and allocation below is worked out by hand in the comments (N = number of nodes; a job is
written name(nodes, walltime)).
"""

from __future__ import annotations

import json
import logging
import math
import subprocess
import sys
import textwrap

import pytest
from batsim.batsim import BatsimScheduler, Job
from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.availability_profile import AvailabilityProfile
from batreplay.schedulers.conservative import Conservative, ConservativePolicy
from batreplay.schedulers.easy import Easy, EasyPolicy, Reservation
from batreplay.schedulers.fcfs import Fcfs, FcfsPolicy
from batreplay.schedulers.policy import QueuedJob, Rejection
from batreplay.schedulers.registry import SCHEDULERS, load_scheduler
from batreplay.schedulers.resource_pool import ResourcePool, procset_of_runs, runs_of
from conftest import REPO_ROOT

ALL_POLICIES = [FcfsPolicy, EasyPolicy, ConservativePolicy]


def starts_of(decisions) -> dict[str, str]:
    """{job id: allocation string} of one decision."""
    return {job.id: str(alloc) for job, alloc in decisions}


def submit_all(policy, *jobs: QueuedJob) -> None:
    for job in jobs:
        assert policy.submit(job) is None


# --------------------------------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------------------------------


def test_queued_job_normalises_missing_walltime():
    assert QueuedJob("w0!1", 2, -1).walltime is None  # pybatsim's mark of a missing walltime
    assert QueuedJob("w0!1", 2, 0).walltime is None
    assert QueuedJob("w0!1", 2, math.nan).walltime is None
    assert QueuedJob("w0!1", 2, 30).walltime == 30.0
    assert QueuedJob("w0!1", 2.0, 30).requested_resources == 2
    with pytest.raises(TypeError, match="w0!1"):
        QueuedJob("w0!1", 2.5, 30)


def test_runs_and_procset_of_runs():
    assert runs_of([0, 1, 2, 5, 7, 8]) == [(0, 2), (5, 5), (7, 8)]
    assert runs_of([3]) == [(3, 3)]
    runs = [(0, 2), (5, 5), (7, 8), (10, 19)]
    assert procset_of_runs(runs) == ProcSet(*runs)
    assert str(procset_of_runs(runs)) == "0-2 5 7-8 10-19"


def test_pool_gives_lowest_ids_and_refuses_double_release():
    pool = ResourcePool(ProcSet((0, 5)))
    a = pool.allocate(2)
    b = pool.allocate(3)
    assert (str(a), str(b)) == ("0-1", "2-4")
    pool.release(a)
    assert str(pool.allocate(3)) == "0-1 5"  # lowest free ids: 0, 1, then 5
    assert pool.nb_free == 0
    pool.release(b)
    with pytest.raises(ValueError, match="not allocated"):
        pool.release(b)
    with pytest.raises(ValueError):
        pool.allocate(4)  # only 3 free


def test_pool_on_non_contiguous_platform_ids():
    pool = ResourcePool(ProcSet((2, 3), (10, 11)))
    assert str(pool.allocate(3)) == "2-3 10"
    with pytest.raises(ValueError, match="not allocated"):
        pool.release(ProcSet(0))


def test_availability_profile_fit_and_reserve():
    # 4 nodes free from t=0; a running job of 2 nodes ends at 10 -> [0,10): 2 free, [10,inf): 4 free.
    profile = AvailabilityProfile.from_steps(0.0, 2, [(10.0, 2)])
    assert profile.free_at(5) == 2 and profile.free_at(10) == 4
    assert profile.earliest_fit(2, 100, 0.0) == 0.0
    assert profile.earliest_fit(3, 1, 0.0) == 10.0
    profile.add(10.0, 15.0, -4)  # a 4-node reservation over [10, 15)
    assert profile.earliest_fit(1, 12, 0.0) == 15.0  # [0,10) too short, [10,15) full
    assert profile.earliest_fit(1, 10, 0.0) == 0.0
    assert profile.earliest_fit(1, 12, 0.0, before=12.0) == 12.0  # nothing before 12: returns the bound
    with pytest.raises(ValueError, match="< 0"):
        profile.add(12.0, 13.0, -1)
    assert profile.free_at(12) == 0  # the failed reservation changed nothing
    assert profile.earliest_fit(1, math.inf, 0.0) == 15.0
    profile.add(15.0, math.inf, -4)  # held forever
    assert profile.earliest_fit(1, 1, 0.0, before=math.inf) == 0.0
    assert profile.earliest_fit(3, 1, 0.0) == math.inf


# --------------------------------------------------------------------------------------------------------------
# Rejections and bookkeeping, common to all policies
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy_class", ALL_POLICIES)
def test_oversized_job_is_rejected_with_reason(policy_class):
    policy = policy_class(4)
    rejection = policy.submit(QueuedJob("w0!big", 5, 10))
    assert rejection == Rejection("w0!big", "requests 5 resources but the platform has only 4")
    assert policy.submit(QueuedJob("w0!none", 0, 10)).job_id == "w0!none"
    assert [r.job_id for r in policy.rejections] == ["w0!big", "w0!none"]
    assert policy.queue == ()
    assert policy.decide(0.0) == []


@pytest.mark.parametrize("policy_class", ALL_POLICIES)
def test_duplicate_submission_and_double_completion(policy_class):
    policy = policy_class(2)
    submit_all(policy, QueuedJob("w0!a", 2, 10))
    with pytest.raises(ValueError, match="twice"):
        policy.submit(QueuedJob("w0!a", 1, 10))
    assert starts_of(policy.decide(0.0)) == {"w0!a": "0-1"}
    with pytest.raises(ValueError, match="twice"):
        policy.submit(QueuedJob("w0!a", 1, 10))
    assert policy.complete("w0!a") is True
    assert policy.complete("w0!a") is False  # freed once
    assert policy.complete("w0!never") is False
    assert policy.pool.nb_free == 2


@pytest.mark.parametrize("policy_class", ALL_POLICIES)
def test_decide_without_events_starts_nothing_more(policy_class):
    policy = policy_class(4)
    submit_all(policy, QueuedJob("w0!a", 3, 10), QueuedJob("w0!b", 3, 10))
    assert starts_of(policy.decide(0.0)) == {"w0!a": "0-2"}
    assert policy.decide(1.0) == []
    assert policy.decide(2.0) == []
    policy.complete("w0!a")
    assert starts_of(policy.decide(3.0)) == {"w0!b": "0-2"}


# --------------------------------------------------------------------------------------------------------------
# FCFS
# --------------------------------------------------------------------------------------------------------------


def test_fcfs_never_overtakes_the_head():
    # N=4: A(3,10) starts on 0-2; B(2,5) does not fit in the 1 free node; C(1,5) would fit but must wait.
    policy = FcfsPolicy(4)
    submit_all(policy, QueuedJob("A", 3, 10), QueuedJob("B", 2, 5), QueuedJob("C", 1, 5))
    assert starts_of(policy.decide(0.0)) == {"A": "0-2"}
    assert [job.id for job in policy.queue] == ["B", "C"]
    policy.complete("A")
    # t=10: B on the lowest ids 0-1, then C on 2.
    decisions = policy.decide(10.0)
    assert [(job.id, str(alloc)) for job, alloc in decisions] == [("B", "0-1"), ("C", "2")]


# --------------------------------------------------------------------------------------------------------------
# EASY
# --------------------------------------------------------------------------------------------------------------


def test_easy_short_job_backfills_without_delaying_the_head():
    # N=4 at t=0: A(2,10) starts on 0-1. Head B(4,10) waits: shadow = 10 (A's end), extra = 4 - 4 = 0.
    # C(2,5): fits in the 2 free nodes and 0 + 5 <= 10 -> backfilled on 2-3.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 4, 10), QueuedJob("C", 2, 5))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1", "C": "2-3"}
    assert policy.reservation == Reservation("B", 10.0, 0)


def test_easy_long_job_that_would_delay_the_head_does_not_backfill():
    # Same, but C(2,20): 0 + 20 > 10 and 2 > extra 0 -> C waits; FCFS-like outcome.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 4, 10), QueuedJob("C", 2, 20))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1"}
    policy.complete("A")
    assert starts_of(policy.decide(10.0)) == {"B": "0-3"}


def test_easy_extra_nodes():
    # N=4: A(2,10) on 0-1. Head B(3,10): shadow 10, free at 10 = 4, extra = 1.
    # C(1,100): too long for the shadow, but 1 <= extra -> backfilled on 2, extra becomes 0.
    # D(1,100): fits in node 3 but extra is 0 and it is too long -> waits.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 3, 10), QueuedJob("C", 1, 100), QueuedJob("D", 1, 100))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1", "C": "2"}
    assert policy.reservation == Reservation("B", 10.0, 1)
    policy.complete("A")
    # t=10: free {0,1,3}: B takes exactly them (its reservation held); D finds no free node.
    assert starts_of(policy.decide(10.0)) == {"B": "0-1 3"}
    assert [job.id for job in policy.queue] == ["D"]


def test_easy_time_criterion_does_not_use_up_extra_nodes():
    # N=4: A(2,10) on 0-1; head B(3,10): shadow 10, extra 1.
    # C(1,5) ends by the shadow time -> backfilled on 2 without touching the extra node;
    # D(1,100) then still has the extra node -> backfilled on 3.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 3, 10), QueuedJob("C", 1, 5), QueuedJob("D", 1, 100))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1", "C": "2", "D": "3"}


def test_easy_several_head_jobs_started_at_the_same_time_enter_the_reservation():
    # N=4: A(1,10) on 0, B(1,20) on 1 (both head jobs fit). Head C(4,5): 2 free; A's end gives 3, B's end
    # gives 4 -> shadow 20, extra 0. D(2,10): 0 + 10 <= 20 -> backfilled on 2-3.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 1, 10), QueuedJob("B", 1, 20), QueuedJob("C", 4, 5), QueuedJob("D", 2, 10))
    assert starts_of(policy.decide(0.0)) == {"A": "0", "B": "1", "D": "2-3"}
    assert policy.reservation == Reservation("C", 20.0, 0)


def test_easy_jobs_without_walltime():
    # N=4: A(2,10) on 0-1, head B(4,10), C(2, no walltime): cannot pass the time criterion, extra 0 -> waits.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 4, 10), QueuedJob("C", 2, None))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1"}
    # With head B(3,10) there is 1 extra node: C(1, no walltime) may use it.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 3, 10), QueuedJob("C", 1, -1))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1", "C": "2"}
    # A running job without walltime never ends in the profile: the head's shadow time is inf, extra 0,
    # and any job with a walltime that fits now passes the time criterion.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, None), QueuedJob("B", 4, 10), QueuedJob("C", 2, 1000), QueuedJob("D", 1, None))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1", "C": "2-3"}
    assert policy.reservation == Reservation("B", math.inf, 0)


def test_easy_float_times_compare_with_tolerance():
    # 0.7 + 0.1 == 0.7999999999999999 in binary floating point, so the slack to the shadow time is
    # 0.09999999999999987 < 0.1: C(2, 0.1) ends exactly at the shadow time and must be backfilled.
    assert 0.7 + 0.1 - 0.7 < 0.1
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 0.1), QueuedJob("B", 4, 1.0), QueuedJob("C", 2, 0.1))
    assert starts_of(policy.decide(0.7)) == {"A": "0-1", "C": "2-3"}
    # 1 microsecond longer is really longer.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 2, 0.1), QueuedJob("B", 4, 1.0), QueuedJob("C", 2, 0.100001))
    assert starts_of(policy.decide(0.7)) == {"A": "0-1"}


def test_easy_shadow_counts_jobs_ending_at_the_same_time_and_never_before_now():
    # N=6: A(2,10), B(2,10), C(1,20) running; 1 free. Head D(3,..): A's end at 10 gives 3 -> shadow 10;
    # B also ends at 10, so 5 nodes are free at 10 and extra = 5 - 3 = 2.
    policy = EasyPolicy(6)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 2, 10), QueuedJob("C", 1, 20))
    policy.decide(0.0)
    assert policy.shadow(QueuedJob("D", 3, 5), 0.0) == (10.0, 2)
    # Asked at t=12 (A and B overran, their completions not yet seen): the shadow time is clamped to now.
    assert policy.shadow(QueuedJob("D", 3, 5), 12.0) == (12.0, 2)


def test_easy_rescans_old_jobs_after_a_completion():
    # N=4 at t=0: A(3,10) on 0-2; head B(4,10): shadow 10, extra 0. C(1,5): 0 + 5 <= 10 -> backfilled on 3.
    # D(1,4): no free node left -> waits.
    policy = EasyPolicy(4)
    submit_all(policy, QueuedJob("A", 3, 10), QueuedJob("B", 4, 10), QueuedJob("C", 1, 5), QueuedJob("D", 1, 4))
    assert starts_of(policy.decide(0.0)) == {"A": "0-2", "C": "3"}
    # t=2: E(1,1) arrives; still no free node: nothing starts (only E needs scanning).
    submit_all(policy, QueuedJob("E", 1, 1))
    assert policy.decide(2.0) == []
    # t=5: C completes; node 3 is free again. D, already scanned before, must be looked at again:
    # 5 + 4 = 9 <= 10 -> D backfilled on 3 (ahead of E, which would also fit).
    policy.complete("C")
    assert starts_of(policy.decide(5.0)) == {"D": "3"}
    assert [job.id for job in policy.queue] == ["B", "E"]


# --------------------------------------------------------------------------------------------------------------
# Conservative backfilling
# --------------------------------------------------------------------------------------------------------------


def test_conservative_backfills_a_short_job():
    # Same as the EASY case: A(2,10) on 0-1, B(4,10) reserved at 10, C(2,5) fits before 10 -> starts now.
    policy = ConservativePolicy(4)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("B", 4, 10), QueuedJob("C", 2, 5))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1", "C": "2-3"}
    assert policy.reservation_of("B") == 10.0


def test_conservative_protects_every_reservation_where_easy_does_not():
    # N=4: A(3,10) on 0-2. B(2,10): EASY head, shadow 10, extra 4 - 2 = 2. C(2,10) does not fit now.
    # D(1,100) fits in node 3; EASY backfills it on an extra node, which delays C (at t=10 only 4-2-1 = 1 node
    # is left for it).
    jobs = [QueuedJob("A", 3, 10), QueuedJob("B", 2, 10), QueuedJob("C", 2, 10), QueuedJob("D", 1, 100)]
    easy = EasyPolicy(4)
    submit_all(easy, *jobs)
    assert starts_of(easy.decide(0.0)) == {"A": "0-2", "D": "3"}
    # Conservative: B reserved [10,20) and C [10,20) (4 nodes free at 10); D(1,100) finds [0,10) with 1 node
    # free but then 0 free on [10,20) -> reserved at 20, not started.
    conservative = ConservativePolicy(4)
    submit_all(conservative, *jobs)
    assert starts_of(conservative.decide(0.0)) == {"A": "0-2"}
    assert [conservative.reservation_of(j) for j in "BCD"] == [10.0, 10.0, 20.0]
    conservative.complete("A")
    assert starts_of(conservative.decide(10.0)) == {"B": "0-1", "C": "2-3"}


def test_conservative_compression_on_early_completion():
    # N=2: A(1,10) starts on 0. B(2,5) reserved at 10. C(1,20): [0,10) has 1 node but only 10 s -> reserved
    # at 15. A ends early at t=2: B moves to 2 and starts (0-1); C then fits at 7 (B's end), earlier than 15.
    policy = ConservativePolicy(2)
    submit_all(policy, QueuedJob("A", 1, 10), QueuedJob("B", 2, 5), QueuedJob("C", 1, 20))
    assert starts_of(policy.decide(0.0)) == {"A": "0"}
    assert (policy.reservation_of("B"), policy.reservation_of("C")) == (10.0, 15.0)
    policy.complete("A")
    assert starts_of(policy.decide(2.0)) == {"B": "0-1"}
    assert policy.reservation_of("C") == 7.0


def test_conservative_compression_moves_jobs_one_at_a_time_and_never_later():
    # N=3 at t=0: A(2,10) on 0-1 and C(1,4) on 2. J1(3,10): [0,4) 0 free, [4,10) 1 free -> reserved at 10.
    # J2(1,6): [4,10) has 1 node for 6 s -> reserved at 4.
    policy = ConservativePolicy(3)
    submit_all(policy, QueuedJob("A", 2, 10), QueuedJob("C", 1, 4), QueuedJob("J1", 3, 10), QueuedJob("J2", 1, 6))
    assert starts_of(policy.decide(0.0)) == {"A": "0-1", "C": "2"}
    assert (policy.reservation_of("J1"), policy.reservation_of("J2")) == (10.0, 4.0)
    # A ends at t=2. Taken out alone, J1 still cannot start before 10 (J2 holds a node on [4,10)), so it stays;
    # J2 then fits from 2 ([2,4) 2 free, [4,..) 3 free) and starts on node 0. Re-placing both from scratch would
    # have put J1 at 4 and pushed J2 to 14, later than its reservation.
    policy.complete("A")
    assert starts_of(policy.decide(2.0)) == {"J2": "0"}
    assert policy.reservation_of("J1") == 10.0


def test_conservative_job_without_walltime_holds_its_nodes_forever():
    # N=2: A(1, no walltime) on 0. B(2,5) can never fit: reservation inf. C(1,5) fits now on node 1.
    policy = ConservativePolicy(2)
    submit_all(policy, QueuedJob("A", 1, None), QueuedJob("B", 2, 5), QueuedJob("C", 1, 5))
    assert starts_of(policy.decide(0.0)) == {"A": "0", "C": "1"}
    assert policy.reservation_of("B") == math.inf
    policy.complete("A")
    policy.complete("C")
    assert starts_of(policy.decide(3.0)) == {"B": "0-1"}


# --------------------------------------------------------------------------------------------------------------
# pybatsim adapters, through a fake `bs`
# --------------------------------------------------------------------------------------------------------------


class FakeBatsim:
    """The part of pybatsim's ``Batsim`` the adapters use; records what they send."""

    def __init__(self, nb_resources: int):
        self.nb_compute_resources = nb_resources
        self.compute_resources = {i: {"id": i, "name": f"node_{i}"} for i in range(nb_resources)}
        self.now = 0.0
        self.executed: list[list[tuple[str, str]]] = []  # one list per execute_jobs call
        self.rejected: list[str] = []
        self.wakeups: list[float] = []

    def time(self) -> float:
        return self.now

    def execute_jobs(self, jobs):
        self.executed.append([(job.id, str(job.allocation)) for job in jobs])

    def reject_jobs(self, jobs):
        self.rejected.extend(job.id for job in jobs)

    def wake_me_up_at(self, time):
        self.wakeups.append(time)


def make_job(job_id: str, res: int, walltime: float, subtime: float = 0.0) -> Job:
    return Job.from_json_dict({"id": job_id, "subtime": subtime, "walltime": walltime, "res": res, "profile": "p"})


def attach(scheduler: PolicyScheduler, bs: FakeBatsim, begin: bool = True) -> PolicyScheduler:
    scheduler.bs = bs
    if begin:
        scheduler.onSimulationBegins()
    return scheduler


def finished(job: Job, state: str) -> Job:
    job.job_state = Job.State[state]
    return job


@pytest.mark.parametrize("scheduler_class", [Fcfs, Easy, Conservative])
def test_adapter_decides_once_per_message_with_static_and_dynamic_ids(scheduler_class):
    bs = FakeBatsim(4)
    scheduler = attach(scheduler_class({}), bs)
    a, b, c = make_job("w0!1", 2, 10), make_job("dyn!12", 2, 10), make_job("w0!2", 1, 10)
    scheduler.onBeforeEvents()
    for job in (a, b, c):
        scheduler.onJobSubmission(job)
    assert bs.executed == []  # nothing before the end of the message
    scheduler.onNoMoreEvents()
    # One EXECUTE batch: w0!1 on 0-1, dyn!12 on 2-3; w0!2 waits (no free node).
    assert bs.executed == [[("w0!1", "0-1"), ("dyn!12", "2-3")]]
    assert isinstance(a.allocation, ProcSet)
    bs.now = 10.0
    scheduler.onJobCompletion(finished(b, "COMPLETED_SUCCESSFULLY"))
    scheduler.onNoMoreEvents()
    assert bs.executed[-1] == [("w0!2", "2")]


@pytest.mark.parametrize("scheduler_class", [Fcfs, Easy, Conservative])
def test_adapter_rejects_oversized_jobs_and_logs_why(scheduler_class, caplog):
    bs = FakeBatsim(4)
    scheduler = attach(scheduler_class(), bs)
    with caplog.at_level(logging.WARNING, logger="batreplay.schedulers.adapter"):
        scheduler.onJobSubmission(make_job("w0!7", 5, 10))
        scheduler.onNoMoreEvents()
    assert bs.rejected == ["w0!7"]
    assert bs.executed == []
    assert scheduler.rejections == [Rejection("w0!7", "requests 5 resources but the platform has only 4")]
    assert "w0!7" in caplog.text and "only 4" in caplog.text


@pytest.mark.parametrize("kill_first", [True, False])
@pytest.mark.parametrize("scheduler_class", [Fcfs, Easy, Conservative])
def test_adapter_frees_a_killed_job_once(scheduler_class, kill_first):
    bs = FakeBatsim(2)
    scheduler = attach(scheduler_class(), bs)
    x = make_job("w0!x", 2, 100)
    scheduler.onJobSubmission(x)
    scheduler.onNoMoreEvents()
    # One message: the kill's JOB_COMPLETED (COMPLETED_KILLED) and JOB_KILLED, in either order, plus a new job.
    bs.now = 5.0
    finished(x, "COMPLETED_KILLED")
    if kill_first:
        scheduler.onJobsKilled([x])
        scheduler.onJobCompletion(x)
    else:
        scheduler.onJobCompletion(x)
        scheduler.onJobsKilled([x])
    y = make_job("dyn!y", 2, 10, subtime=5.0)
    scheduler.onJobSubmission(y)
    scheduler.onNoMoreEvents()
    assert bs.executed[-1] == [("dyn!y", "0-1")]
    assert scheduler.policy.pool.nb_free == 0  # freed once, then taken by y
    assert scheduler.unknown_completions == []
    # A later JOB_KILLED for a job that had already completed normally (kill racing completion) is harmless.
    scheduler.onJobCompletion(finished(y, "COMPLETED_SUCCESSFULLY"))
    scheduler.onJobsKilled([y])
    assert scheduler.policy.pool.nb_free == 2


@pytest.mark.parametrize("scheduler_class", [Fcfs, Easy, Conservative])
def test_adapter_walltime_reached_and_unknown_completions(scheduler_class, caplog):
    bs = FakeBatsim(2)
    scheduler = attach(scheduler_class(), bs)
    job = make_job("w0!w", 1, 10)
    scheduler.onJobSubmission(job)
    scheduler.onNoMoreEvents()
    bs.now = 10.0
    scheduler.onJobCompletion(finished(job, "COMPLETED_WALLTIME_REACHED"))
    assert scheduler.policy.pool.nb_free == 2
    with caplog.at_level(logging.WARNING, logger="batreplay.schedulers.adapter"):
        scheduler.onJobCompletion(finished(make_job("dyn!other", 1, 10), "COMPLETED_SUCCESSFULLY"))
    assert scheduler.unknown_completions == ["dyn!other"]
    assert "dyn!other" in caplog.text


@pytest.mark.parametrize("scheduler_class", [Fcfs, Easy, Conservative])
def test_adapter_tolerates_calls_and_notifications(scheduler_class):
    bs = FakeBatsim(2)
    # Driven like a broker would: no onSimulationBegins, the policy is built at the first event.
    scheduler = attach(scheduler_class(), bs, begin=False)
    scheduler.onRequestedCall()
    scheduler.onNoMoreEvents()
    assert scheduler.rejections == []
    scheduler.onNoMoreJobsInWorkloads()
    scheduler.onNotifyGenericEvent({"type": "something_else"})
    scheduler.onNoMoreExternalEvents()
    scheduler.onJobSubmission(make_job("dyn!1", 1, 10))
    scheduler.onRequestedCall()
    scheduler.onNoMoreEvents()
    assert bs.executed == [[("dyn!1", "0")]]
    assert bs.wakeups == []


# --------------------------------------------------------------------------------------------------------------
# Real Batsim transcripts, replayed through pybatsim's own Batsim class
# --------------------------------------------------------------------------------------------------------------


class TranscriptNetwork:
    """Stands for pybatsim's NetworkHandler: hands out Batsim's recorded messages, keeps the replies."""

    messages: list[dict] = []
    replies: list[dict] = []

    def __init__(self, *args, **kwargs):
        self._queue = list(type(self).messages)

    def bind(self):
        pass

    def recv(self, blocking=False):
        return self._queue.pop(0)

    def send(self, message):
        type(self).replies.append(json.loads(json.dumps(message)))

    def close(self):
        pass


def decisions(message: dict) -> list[tuple[str, str, str | None]]:
    return [
        (event["type"], event["data"]["job_id"], event["data"].get("alloc"))
        for event in message["events"]
        if event["type"] in ("EXECUTE_JOB", "REJECT_JOB")
    ]


@pytest.mark.parametrize("case", ["dynamic", "coincide"])
@pytest.mark.parametrize("scheduler_class", [Fcfs, Easy, Conservative])
def test_transcript_replay_matches_recorded_fcfs_decisions(golden_dir, monkeypatch, case, scheduler_class):
    """The recorded probes are FCFS on the lowest free ids (rejecting jobs wider than the platform). In both
    cases no job could be backfilled (checked by hand: in `dynamic` at t=20 the head dyn!0b(2) has shadow 27 with
    0 extra nodes and dyn!1a(1,30) would end at 50; in `coincide` no queued job ever finds a free node), so EASY
    and conservative must take exactly the probe's decisions, message by message. The replay goes through
    pybatsim's real event dispatch: dynamic ids, REQUESTED_CALL, NOTIFY, a kill (JOB_COMPLETED + JOB_KILLED in
    one message) and a walltime kill."""
    import batsim.batsim as pybatsim

    lines = [json.loads(line) for line in (golden_dir / case / "transcript.jsonl").read_text().splitlines()]
    TranscriptNetwork.messages = [line["msg"] for line in lines if line["from"] == "batsim"]
    TranscriptNetwork.replies = []
    recorded = [line["msg"] for line in lines if line["from"] == "scheduler"]
    monkeypatch.setattr(pybatsim, "NetworkHandler", TranscriptNetwork)
    scheduler = scheduler_class({})
    pybatsim.Batsim(scheduler, "tcp://unused:0", 0).start()
    replies = TranscriptNetwork.replies
    assert len(replies) == len(recorded)
    for index, (ours, theirs) in enumerate(zip(replies, recorded)):
        assert decisions(ours) == decisions(theirs), f"message {index}"
        assert {event["type"] for event in ours["events"]} <= {"EXECUTE_JOB", "REJECT_JOB"}
    assert scheduler.unknown_completions == []
    assert scheduler.policy.pool.nb_free == scheduler.policy.nb_resources
    assert scheduler.policy.queue == ()


# --------------------------------------------------------------------------------------------------------------
# Loading: pybatsim launcher, registry
# --------------------------------------------------------------------------------------------------------------


def test_pybatsim_launcher_loads_each_scheduler_file():
    # In a separate interpreter: the launcher puts the file's folder on sys.path and imports it as `schedulers.x`.
    code = textwrap.dedent(
        """
        from batsim.tools.launcher import instanciate_scheduler
        for name in ("fcfs", "easy", "conservative"):
            s = instanciate_scheduler(f"schedulers/{name}.py", {})
            print(type(s).__name__, type(s).policy_class.name)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Fcfs", "fcfs", "Easy", "easy", "Conservative", "conservative"]


def test_registry_names_and_paths(tmp_path):
    orders = ("sjf", "ljf", "saf", "laf")
    assert set(SCHEDULERS) == {"fcfs", "easy", "conservative", "easy-sjbf", "backfilling", "easy-schedulus",
                               "easy-coscheduling", "agent", *orders,
                               *(f"easy-{order}" for order in orders), *(f"conservative-{order}" for order in orders)}
    assert (SCHEDULERS["fcfs"], SCHEDULERS["easy"], SCHEDULERS["conservative"]) == (Fcfs, Easy, Conservative)
    assert isinstance(load_scheduler("easy"), Easy)
    assert load_scheduler("fcfs", {}).options == {"node_selection": "lowest-id", "slots": False, "seed": 0}
    with pytest.raises(ValueError, match="fcfs: unknown option 'x'"):  # issue 9, item 14: unknown keys are refused
        load_scheduler("fcfs", {"x": 1})
    from_file = load_scheduler(REPO_ROOT / "schedulers" / "conservative.py")
    assert type(from_file).__name__ == "Conservative" and isinstance(from_file, BatsimScheduler)

    custom = tmp_path / "myScheduler.py"
    custom.write_text(
        "from batsim.batsim import BatsimScheduler\n"
        "class MyScheduler(BatsimScheduler):\n"
        "    pass\n"
    )
    assert type(load_scheduler(str(custom), {"a": 2})).__name__ == "MyScheduler"

    wrong = tmp_path / "other.py"
    wrong.write_text("class Something:\n    pass\n")
    with pytest.raises(ValueError, match="no class named 'Other'"):
        load_scheduler(wrong)
    with pytest.raises(FileNotFoundError):
        load_scheduler(tmp_path / "missing.py")
    with pytest.raises(ValueError, match="backfilling, conservative, conservative-laf, .*easy-sjbf, easy-sjf, fcfs"):
        load_scheduler("sjbf")
