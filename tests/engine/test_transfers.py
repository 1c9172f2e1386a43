"""Jobs that send bytes between their hosts (``parallel`` with a communication matrix, ``parallel_homogeneous`` with
``com``) on the embedded engine: the bytes each link carries, the solver's invariants over hosts and links, whole
runs (hypothesis), refusals, and which path Batsim's messages take. Exactness against a real Batsim:
``test_recorded_cases.py`` (cases ``comm-backbone``, ``comm-contention``, ``comm-kill``) and
``test_real_batsim_recorded.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine import server
from batreplay.engine.options import EngineError, EngineOptions
from batreplay.engine.profiles import InvalidProfileError, UnsupportedProfileError, validate_profile
from batreplay.engine.sharing import SharedHosts, SharedTask
from batreplay.engine.simulator import BatsimEngine
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.platforms.reader import read_platform
from batreplay.platforms.speedup import NoSpeedup
from test_engine_properties import FirstFit, Recorder

#: Two clusters of four hosts (1 and 2.5 Gflop/s; private links of 125 MB/s, split-duplex on the left and shared on
#: the right; backbones of 150 and 200 MB/s) joined to each other and to the master's cluster by a 100 MB/s link.
PLATFORM = Path(__file__).resolve().parents[1] / "golden" / "comm-contention" / "platform.xml"
SPEEDS = [1e9] * 4 + [2.5e9] * 4


def _engine(workload, options=None, platform=None):
    platform = platform or read_platform(PLATFORM)
    return BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": workload}, options=options,
                        storage=platform.storage_resources, network=platform.network, master_host=platform.master_host)


def _job(profile, res=2, walltime=100):
    return {"jobs": [{"id": "1", "subtime": 0, "res": res, "walltime": walltime, "profile": "p"}],
            "profiles": {"p": profile}}


def test_each_link_carries_the_bytes_of_every_pair_whose_route_crosses_it():
    transfers = _engine(_job({"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}, 3)).handlers.machine.transfers
    # hosts 2, 3 (left cluster, split-duplex links, left backbone) and 4 (right cluster: shared links, right backbone)
    task = transfers.task({"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}, [2, 3, 4], [1e9] * 3)
    carried = {name: task.amounts[link] for name, link in transfers._link_ids.items()}
    assert carried == {
        "left_link_2_UP": 2e6, "left_link_3_UP": 2e6, "left_link_2_DOWN": 2e6, "left_link_3_DOWN": 2e6,
        "left_backbone": 6e6,  # 2 <-> 3 inside the cluster, and 2 and 3 to and from host 4
        "backbone": 4e6, "right_backbone": 4e6,
        "right_link_4": 4e6,  # one link both ways: what 4 sends and what it receives
    }
    assert [task.amounts[h] for h in (2, 3, 4)] == [1e9] * 3  # flop on the hosts, in the same task


def test_bytes_between_hosts_do_not_go_to_the_storage_host_and_hosts_without_a_route_exchange_them_freely():
    platform = read_platform(PLATFORM.parents[1] / "pfs-slots" / "platform.xml")  # Full routing, a storage host
    talking = _job({"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e7})
    transfers = _engine(talking, platform=platform).handlers.machine.transfers
    # no route between two nodes: SimGrid 3.32 gives an empty one (a real Batsim ran such jobs in their compute time)
    task = transfers.task({"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e7}, [0, 3], [1e9] * 2)
    assert task.amounts == {0: 1e9, 3: 1e9}
    reads = {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}
    reads = transfers.task(reads, transfers.hosts_of(reads, ProcSet(0, 3), None), [])  # + the storage host, id 4
    assert {name: reads.amounts[link] for name, link in transfers._link_ids.items()} == {
        "node_0_io": 1e8, "node_3_io": 1e8, "storage_io": 2e8}  # each host reads once, over its link and the storage's


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e6, 1e10), min_size=2, max_size=6).flatmap(
    lambda caps: st.tuples(st.just(caps), st.integers(1, len(caps) - 1),
                           st.lists(st.dictionaries(st.integers(0, len(caps) - 1), st.floats(1.0, 1e10), min_size=1),
                                    min_size=1, max_size=8),
                           st.lists(st.integers(0, 7), max_size=8))))
def test_no_host_or_link_is_used_beyond_its_capacity(case):
    capacities, nb_hosts, amounts, removals = case
    solver = SharedHosts(capacities[:nb_hosts], [2] * nb_hosts)  # two cores each: a task gets one at most
    for bandwidth in capacities[nb_hosts:]:
        solver.add_link(bandwidth)
    tasks = []

    def check():
        for resource, capacity in enumerate(capacities):
            used = sum(task.amounts.get(resource, 0.0) * task.rate for task in tasks)
            assert used <= capacity * (2 if resource < nb_hosts else 1) * (1 + 1e-9)
        for task in tasks:
            assert 0 < task.rate < float("inf")
            for host, flop in task.amounts.items():  # one core per task on a host, links do not bound it so
                assert host >= nb_hosts or flop * task.rate <= capacities[host] * (1 + 1e-9)

    for task_amounts in amounts:
        tasks.append(SharedTask(dict(task_amounts), solver=solver))
        solver.add(tasks[-1])
        check()
    for index in removals:
        if index < len(tasks):
            solver.remove(tasks.pop(index))
            check()


@st.composite
def talking_workloads(draw):
    jobs, profiles = [], {}
    for i in range(draw(st.integers(1, 12))):
        res = draw(st.integers(1, 5))
        kind = draw(st.sampled_from(["parallel", "parallel_homogeneous", "delay"]))
        if kind == "parallel":
            profile = {"type": kind, "cpu": [draw(st.integers(0, 3)) * 5e8 for _ in range(res)],
                       "com": [draw(st.integers(0, 2)) * 5e7 for _ in range(res * res)]}
        elif kind == "parallel_homogeneous":
            profile = {"type": kind, "cpu": draw(st.integers(0, 3)) * 5e8, "com": draw(st.integers(0, 2)) * 4e7}
        else:
            profile = {"type": kind, "delay": 1.0}
        profiles[f"p{i}"] = profile
        jobs.append({"id": str(i), "subtime": draw(st.integers(0, 10)), "res": res,
                     "walltime": draw(st.sampled_from([-1, 2, 100])), "profile": f"p{i}"})
    return {"nb_res": 8, "jobs": jobs, "profiles": profiles}


@pytest.mark.parametrize("case", ["comm-contention", "latency-contention"])  # (latencies: 20 us to 50 ms)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=talking_workloads())
def test_runs_of_talking_jobs_keep_time_every_job_and_the_links_capacities(case, workload):
    recorder = Recorder()
    platform = read_platform(PLATFORM.parents[1] / case / "platform.xml")
    names = [host.name for host in platform.hosts]
    engine = _engine(workload, platform=platform)
    run_scheduler(engine, FirstFit(), on_request=recorder)
    out = jobs_frame(engine.records)
    assert recorder.nows == sorted(recorder.nows)  # time never goes back
    assert sorted(out["job_id"]) == sorted(j["id"] for j in workload["jobs"])  # every job ends once
    for row in out.itertuples():
        profile = workload["profiles"][row.profile]
        if row.final_state != "COMPLETED_SUCCESSFULLY" or profile["type"] == "delay":
            continue
        hosts = list(ProcSet.from_str(str(row.allocated_resources)))
        n = len(hosts)
        cpu = profile["cpu"] if profile["type"] == "parallel" else [profile["cpu"]] * n
        com = profile["com"] if profile["type"] == "parallel" else [
            0 if i == j else profile["com"] for i in range(n) for j in range(n)]
        # no job computes faster than its hosts or sends faster than its private links (every byte a host sends
        # crosses its own outgoing link once, 125 MB/s); times are printed with six decimals
        # (a task of one host: SimGrid ignores its bytes)
        sent = max(sum(com[i * n:(i + 1) * n]) for i in range(n)) if n > 1 else 0.0
        alone = max([c / SPEEDS[h] for c, h in zip(cpu, hosts)] + [sent / 125e6])
        # and a task that sends bytes first waits the largest latency of its routes
        latency = max((platform.network.latency(names[hosts[k // n]], names[hosts[k % n]]) for k in range(n * n)
                       if com[k] > 0), default=0.0) if n > 1 else 0.0
        assert row.execution_time >= latency + alone - 1e-6
    used = [workload["profiles"][job["profile"]] for job in workload["jobs"]]
    talks = [p for p in used if p["type"] != "delay" and (sum(p["com"]) if p["type"] == "parallel" else p["com"]) > 0]
    assert talks == [] or engine.handlers.machine.transfers.active  # every message joins the links then


def _messages(engine):
    """Run ``engine`` under FirstFit; the kinds of the messages its server took, and how many crossed links in the
    solver."""
    taken = []
    handle = engine.server.handle
    engine.server.handle = lambda message: (taken.append(message.kind), handle(message))
    run_scheduler(engine, FirstFit())
    return taken, engine.handlers.machine.transfers.messages_carried


def test_messages_cross_their_links_in_the_solver_when_the_run_moves_bytes_or_their_links_are_not_125MBps():
    fast = read_platform(PLATFORM.parents[1] / "pfs-slots" / "platform.xml")  # message routes over 125 MB/s links
    talking = _engine(_job({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 2e8, 0, 0]}), platform=fast)
    taken, carried = _messages(talking)
    assert carried == len(taken) and set(taken) >= {server.COMPLETED, server.SUBMIT}  # every one, the master's too
    taken, carried = _messages(_engine(_job({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 0, 0, 0]}),
                                       platform=fast))
    assert taken and carried == 0  # no bytes, 125 MB/s routes: each message timed alone at 125 MB/s, as before
    # the routes to the master of the comm platforms cross a 100 MB/s link: messages take 10 ns, in the solver
    quiet = _engine(_job({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 0, 0, 0]}))
    taken, carried = _messages(quiet)
    assert carried == len(taken) > 1
    talking = _engine(_job({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 2e8, 0, 0]}))
    _messages(talking)
    # one rate for the task: its bytes (1.6 s on a 125 MB/s link) outlast its flop (1 s)
    assert talking.records[0].finish_time == pytest.approx(2e8 / 125e6)


def test_platforms_on_which_messages_cannot_be_timed_are_refused_and_latencies_delay_them(tmp_path):
    latent = tmp_path / "latent.xml"
    latent.write_text(PLATFORM.read_text().replace('<link id="backbone" bandwidth="100MBps" latency="0us"',
                                                   '<link id="backbone" bandwidth="100MBps" latency="2us"'))
    quiet = _job({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 0, 0, 0]})
    engine = _engine(quiet, platform=read_platform(latent))  # its messages wait 2 us on the backbone, in the solver
    taken, carried = _messages(engine)
    assert carried == len(taken) and engine.records[0].finish_time == 1.0
    alone = tmp_path / "alone.xml"  # a master host without a route to itself: SimGrid's own loopback (FATPIPE)
    alone.write_text((PLATFORM.parents[1] / "pfs-slots" / "platform.xml").read_text().replace(
        '<route src="master_host" dst="master_host">\n      <link_ctn id="master_loop" />\n    </route>', ""))
    with pytest.raises(EngineError, match="master_host has no route to itself"):
        _engine(quiet, platform=read_platform(alone))


def test_jobs_that_talk_are_refused_where_the_engine_cannot_play_them(tmp_path):
    workload = _job({"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6})
    with pytest.raises(UnsupportedProfileError, match="routes are unknown"):
        BatsimEngine([(f"node_{k}", 1e9) for k in range(4)], {"w0": workload})
    with pytest.raises(UnsupportedProfileError, match="jobs are co-scheduled"):
        _engine(workload, EngineOptions(speedup_model=NoSpeedup()))
    _engine(workload, EngineOptions(compute_sharing=True))  # played: case comm-sharing
    fat = tmp_path / "fat.xml"  # a link between two nodes, on no route of Batsim's messages, shared otherwise
    fat.write_text((PLATFORM.parents[1] / "pfs-slots" / "platform.xml").read_text().replace("</zone>", (
        '<link id="fat" bandwidth="1GBps" latency="5us" sharing_policy="FATPIPE"/>'
        '<route src="node_0" dst="node_1"><link_ctn id="fat"/></route></zone>')))
    with pytest.raises(UnsupportedProfileError, match="'fat' is not shared as the engine plays links"):
        _engine(workload, platform=read_platform(fat))
    _engine(dict(workload, jobs=[]), platform=read_platform(fat))  # a profile no job uses is never refused


def test_bytes_a_host_sends_itself_over_a_loopback_are_refused_before_the_run(tmp_path):
    looped = tmp_path / "looped.xml"
    looped.write_text(PLATFORM.read_text().replace('sharing_policy="SHARED"',
                                                   'sharing_policy="SHARED" loopback_bw="10GBps" loopback_lat="0us"'))
    platform = read_platform(looped)
    run_scheduler(_engine(_job({"type": "parallel", "cpu": [1e9, 0], "com": [0, 1e6, 0, 0]}), platform=platform),
                  FirstFit())  # no host sends itself bytes: the loopbacks (FATPIPE) are never crossed
    with pytest.raises(UnsupportedProfileError, match="'right_link_4_loopback' is not shared as the engine plays"):
        _engine(_job({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 0, 0, 1e6]}), platform=platform)
    # a task of one host: SimGrid runs it as a computation alone, its bytes ignored (recorded case pfs-slots, job 15)
    _engine(_job({"type": "parallel", "cpu": [1e9], "com": [1e6]}, res=1), platform=platform)


@pytest.mark.parametrize("profile, words", [
    ({"type": "parallel", "cpu": [1, 1], "com": [0, 1, 1]}, "a list of 4 numbers of bytes"),
    ({"type": "parallel", "cpu": [1, 1], "com": [0, 1, -1, 0]}, "numbers of bytes >= 0"),
    ({"type": "parallel_homogeneous", "cpu": 1, "com": "1e6"}, "numbers of bytes >= 0"),
    ({"type": "parallel_homogeneous_total", "cpu": 1, "com": -3}, "numbers of bytes >= 0"),
])
def test_communication_batsim_refuses_is_refused(profile, words):
    with pytest.raises(InvalidProfileError, match=words):
        validate_profile("p", profile)


def test_the_simulated_time_bound_counts_the_hosts_the_jobs_of_a_profile_request():
    from batreplay.engine.profiles import check_simulated_times

    # 1e8 bytes between every two hosts, over 100 MB/s links: at most 2 s for a 2-host job, 11.6 days for 1,000
    # hosts; submitted 50,000 s before the bound (1e10 s)
    profiles = {"talk": {"type": "parallel_homogeneous", "cpu": 0, "com": 1e8},
                "rounds": {"type": "composed", "seq": ["talk"], "repeat": 2}}
    narrow = {"jobs": [{"id": "1", "subtime": 9.99995e9, "res": 2, "profile": "rounds"}], "profiles": profiles}
    check_simulated_times(narrow, 1e9, io=(1e8, 100_000))  # the step runs on 2 hosts only: accepted
    wide = {"jobs": [{"id": "1", "subtime": 9.99995e9, "res": 1000, "profile": "talk"}], "profiles": profiles}
    with pytest.raises(ValueError, match="profile 'talk' takes up to"):
        check_simulated_times(wide, 1e9, io=(1e8, 100_000))
