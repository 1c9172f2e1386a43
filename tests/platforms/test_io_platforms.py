"""Platforms with I/O (issue 27, item 1): node types with ``io_rate``, the ``[storage]`` table, ``batreplay platform
--io-rate/--storage-rate``, the generated SimGrid topology (a storage host, one I/O link per node, a shared storage
link, the message links kept apart), its reading back, its scaled variants, the embedded engine on it, and (slow)
a real Batsim 4.2.1 running ``parallel_homogeneous_pfs`` jobs on it at the times the link bandwidths give."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from batreplay.cli import main
from batreplay.platforms.generate import (
    SCALED_VARIANTS, cluster_platform, format_bandwidth, platform_command, scale_platform, variant_path,
    write_platform,
)
from batreplay.platforms.node_types import (
    NodeType, NodeTypeError, NodeTypesFile, default_storage_rate, read_node_types, read_node_types_file,
)
from batreplay.platforms.reader import read_platform

IO_TOML = """
[[node_types]]
name = "fat"
count = 2
cores = 4
speed = 2e9
io_rate = 1e8

[[node_types]]
name = "thin"
count = 3
speed = 1e9
io_rate = 50000000
"""


def _zone(text: str) -> ET.Element:
    """The one zone of a platform text."""
    root = ET.fromstring(text.split("\n", 2)[2])  # after the XML declaration and the DOCTYPE line
    assert root.tag == "platform" and root.get("version") == "4.1"
    (zone,) = root
    return zone


def _links(zone: ET.Element) -> dict[str, float]:
    """Link id -> bandwidth in bytes/s, read as SimGrid reads ``<number>Bps`` (strtod, unit factor 1) or the
    message links' ``125MBps``."""
    found = {}
    for link in zone.iter("link"):
        assert link.get("latency") == "0us"
        text = link.get("bandwidth")
        number, unit = re.fullmatch(r"([0-9.e+-]+)(Bps|MBps)", text).groups()
        found[link.get("id")] = float(number) * {"Bps": 1.0, "MBps": 1e6}[unit]
    return found


def _routes(zone: ET.Element) -> dict[tuple[str, str], list[str]]:
    return {(r.get("src"), r.get("dst")): [c.get("id") for c in r] for r in zone.iter("route")}


def _storage_bandwidth(path: Path) -> float:
    return _links(_zone(path.read_text()))["storage_io"]


# --- the generated topology -------------------------------------------------------------------------------------

def test_node_types_with_io_rate_give_hosts_io_links_a_storage_and_separate_message_links(tmp_path):
    path = tmp_path / "io.toml"
    path.write_text(IO_TOML + "\n[storage]\nrate = 1.5e8\n")
    machine = read_node_types_file(path)
    assert machine == NodeTypesFile((NodeType("fat", 2, 2e9, cores=4, io_rate=1e8),
                                     NodeType("thin", 3, 1e9, io_rate=5e7)), 1.5e8)
    zone = _zone(cluster_platform(node_types=machine.node_types, storage_rate=machine.storage_rate))
    assert zone.get("routing") == "Full" and zone.find("cluster") is None
    hosts = {h.get("id"): h for h in zone.iter("host")}
    nodes = [f"node_{k}" for k in range(5)]
    assert list(hosts) == [*nodes, "master_host", "storage"]
    assert [(hosts[n].get("speed"), hosts[n].get("core")) for n in nodes] == [("2Gf", "4")] * 2 + [("1Gf", None)] * 3
    assert [[(p.get("id"), p.get("value")) for p in hosts[n]] for n in ("node_0", "node_4")] == [
        [("node_type", "fat"), ("slots", "4"), ("speed", "2000000000.0"), ("io_rate", "100000000.0")],
        [("node_type", "thin"), ("slots", "1"), ("speed", "1000000000.0"), ("io_rate", "50000000.0")]]
    assert list(hosts["master_host"]) == []  # master by its name only: Batsim 4.2.1 aborts on name and role both
    assert [(p.get("id"), p.get("value")) for p in hosts["storage"]] == [("role", "storage")]
    assert zone.find("router") is None
    links = _links(zone)
    assert links == {**{f"{n}_net": 125e6 for n in nodes}, "master_net": 125e6, "master_loop": 125e6,
                     **{f"{n}_io": 1e8 for n in nodes[:2]}, **{f"{n}_io": 5e7 for n in nodes[2:]},
                     "storage_io": 1.5e8}
    routes = _routes(zone)
    # messages: node -> master on links of their own, the master's own messages on master_loop (not SimGrid's
    # loopback); I/O: node -> storage through the node's I/O link and the storage link
    assert routes == {**{(n, "master_host"): [f"{n}_net", "master_net"] for n in nodes},
                      ("master_host", "master_host"): ["master_loop"],
                      **{(n, "storage"): [f"{n}_io", "storage_io"] for n in nodes}}


def test_io_platform_reads_back_with_its_hosts_and_storage_numbered_as_batsim_does(tmp_path):
    path = tmp_path / "io.toml"
    path.write_text(IO_TOML)
    machine = read_node_types_file(path)
    platform = read_platform(write_platform(tmp_path / "io.xml", node_types=machine.node_types))
    assert platform.master_host == "master_host" and platform.storage_hosts == ("storage",)
    assert [(h.id, h.name) for h in platform.storage] == [(5, "storage")]  # after the compute hosts
    assert platform.names == [f"node_{k}" for k in range(5)]
    assert list(platform.speeds) == [2e9, 2e9, 1e9, 1e9, 1e9] and platform.cores == [4, 4, 1, 1, 1]
    assert platform.node_types == {"fat": [0, 1], "thin": [2, 3, 4]}
    assert [h.prop("io_rate") for h in platform.hosts] == ["100000000.0"] * 2 + ["50000000.0"] * 3
    assert [h.slots for h in platform.hosts] == [4, 4, 1, 1, 1]


def test_without_storage_table_the_storage_rate_is_the_sum_of_the_nodes_io_rates(tmp_path):
    path = tmp_path / "io.toml"
    path.write_text(IO_TOML)
    machine = read_node_types_file(path)
    assert machine.storage_rate is None and machine.has_io
    assert default_storage_rate(machine.node_types) == 2 * 1e8 + 3 * 5e7
    text = cluster_platform(node_types=machine.node_types)
    assert _links(_zone(text))["storage_io"] == 3.5e8
    # a homogeneous cluster: nodes x io_rate, unless given
    assert _links(_zone(cluster_platform(4, 1e9, io_rate=1e8)))["storage_io"] == 4e8
    assert _links(_zone(cluster_platform(4, 1e9, io_rate=1e8, storage_rate=3e8)))["storage_io"] == 3e8


def test_platforms_without_io_are_written_as_clusters_as_before(tmp_path):
    path = tmp_path / "types.toml"
    path.write_text('[[node_types]]\nname = "a"\ncount = 2\nspeed = 1e9\n')
    assert read_node_types_file(path) == NodeTypesFile((NodeType("a", 2, 1e9),), None)
    text = cluster_platform(node_types=read_node_types(path))
    assert "<cluster" in text and "storage" not in text and "io_rate" not in text


@pytest.mark.parametrize("rate", [0.1, 1 / 3, 123456789.123, 1e20, 2.5e-300, 1.7976931348623157e308])
def test_bandwidths_are_written_so_that_simgrid_reads_the_exact_bytes_per_second(rate):
    text = format_bandwidth(rate)
    assert text.endswith("Bps") and float(text[:-3]) == rate  # strtod of the number, x 1 for Bps
    zone = _zone(cluster_platform(1, 1e9, io_rate=rate, storage_rate=rate))
    assert _links(zone)["node_0_io"] == rate and _links(zone)["storage_io"] == rate


def test_many_hosts_keep_the_zero_padded_names_and_ids_of_the_cluster_form(tmp_path):
    platform = read_platform(write_platform(tmp_path / "p.xml", 12, 1e9, io_rate=1e8))
    cluster = read_platform(write_platform(tmp_path / "c.xml", 12, 1e9))
    assert platform.names == cluster.names == [f"node_{k:02d}" for k in range(12)]
    assert platform.storage[0].id == 12


# --- refusals ---------------------------------------------------------------------------------------------------

_ONE = '[[node_types]]\nname = "a"\ncount = 2\nspeed = 1e9\n'


@pytest.mark.parametrize(("text", "message"), [
    (_ONE + "io_rate = 0\n", r"node type 1: node type 'a': io_rate = 0, need a finite number of bytes/s > 0"),
    (_ONE + "io_rate = -5.0\n", r"node type 1: node type 'a': io_rate = -5.0"),
    (_ONE + "io_rate = inf\n", r"node type 1: node type 'a': io_rate = inf"),
    (_ONE + "io_rate = nan\n", r"node type 1: node type 'a': io_rate = nan"),
    (_ONE + 'io_rate = "fast"\n', r"node type 1: node type 'a': io_rate = 'fast', need a number of bytes/s"),
    (_ONE + "io_rate = true\n", r"node type 1: node type 'a': io_rate = True"),
    (_ONE + "io_rate = 1e8\n" + _ONE.replace('"a"', '"b"'),
     r"node type 2: io_rate is given for node type 'a' but not for 'b'"),
    (_ONE + _ONE.replace('"a"', '"b"') + "io_rate = 1e8\n",
     r"node type 2: io_rate is given for node type 'b' but not for 'a'"),
    (_ONE + "[storage]\nrate = 1e9\n", r"\[storage\]: rate is given but no node type has an io_rate"),
    (_ONE + "io_rate = 1e8\n[storage]\nrate = 0\n", r"\[storage\]: rate = 0, need a finite number of bytes/s > 0"),
    (_ONE + "io_rate = 1e8\n[storage]\nrate = \"1GBps\"\n", r"\[storage\]: rate = '1GBps'"),
    (_ONE + "io_rate = 1e8\n[storage]\n", r"\[storage\]: missing key\(s\) rate"),
    (_ONE + "io_rate = 1e8\n[storage]\nrate = 1e9\nlatency = 0\n", r"\[storage\]: unknown key\(s\) latency"),
    ("storage = 3\n" + _ONE + "io_rate = 1e8\n", r"\[storage\]: expected a table"),
    (_ONE + "io_rate = 1e8\n[disks]\nrate = 1\n", r"unknown top-level key\(s\) disks"),
])
def test_bad_io_settings_are_refused_in_one_line_naming_file_table_and_field(tmp_path, text, message):
    path = tmp_path / "types.toml"
    path.write_text(text)
    with pytest.raises(NodeTypeError, match=f"^{re.escape(str(path))}: {message}") as caught:
        read_node_types_file(path)
    assert "\n" not in str(caught.value)
    with pytest.raises(NodeTypeError):
        read_node_types(path)  # the list-only reader checks the same file


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"nodes": 2, "speed": 1e9, "storage_rate": 1e9}, "storage_rate = 1000000000.0: a storage rate needs"),
    ({"nodes": 2, "speed": 1e9, "io_rate": 0.0}, "io_rate = 0.0"),
    ({"nodes": 2, "speed": 1e9, "io_rate": 1e8, "storage_rate": -1.0}, "storage_rate = -1.0"),
    ({"nodes": 2, "speed": 1e9, "io_rate": 1e308}, "the default, the sum of the hosts' I/O rates, is inf"),
    ({"node_types": [NodeType("a", 1, 1e9, io_rate=1e8)], "io_rate": 1e8}, "io_rate: give it with nodes or groups"),
    ({"node_types": [NodeType("a", 1, 1e9, io_rate=1e8), NodeType("b", 1, 1e9)]}, "given for some hosts and not"),
])
def test_the_generator_refuses_inconsistent_io(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        cluster_platform(**kwargs)


# --- the command line -------------------------------------------------------------------------------------------

def test_platform_command_with_io_rate_writes_the_io_platform(tmp_path, capsys):
    out = tmp_path / "io.xml"
    assert main(["platform", "--nodes", "4", "--io-rate", "1e8", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    platform = read_platform(out)
    assert platform.nb_compute == 4 and platform.storage_hosts == ("storage",)
    assert [h.properties for h in platform.hosts] == [(("io_rate", "100000000.0"),)] * 4
    links = _links(_zone(out.read_text()))
    assert [links[f"node_{k}_io"] for k in range(4)] == [1e8] * 4 and links["storage_io"] == 4e8
    assert main(["platform", "--nodes", "4", "--io-rate", "1e8", "--storage-rate", "2.5e8", "--out", str(out)]) == 0
    assert _storage_bandwidth(out) == 2.5e8


def test_platform_command_takes_the_io_of_a_node_types_file(tmp_path):
    types = tmp_path / "types.toml"
    types.write_text(IO_TOML + "[storage]\nrate = 7e8\n")
    out = tmp_path / "grid.xml"
    assert main(["platform", "--node-types", str(types), "--out", str(out)]) == 0
    assert _storage_bandwidth(out) == 7e8
    assert read_platform(out).node_types == {"fat": [0, 1], "thin": [2, 3, 4]}


@pytest.mark.parametrize(("argv", "named"), [
    (["--nodes", "4", "--storage-rate", "1e9"], "--storage-rate 1000000000.0: a storage rate goes with"),
    (["--nodes", "4", "--io-rate", "0"], "--io-rate 0.0: need a finite number of bytes/s > 0"),
    (["--nodes", "4", "--io-rate", "1e8", "--storage-rate", "-2"], "--storage-rate -2.0"),
    (["--nodes", "4", "--io-rate", "1e308"], "--storage-rate: the default, the sum of the nodes' I/O rates"),
    (["--node-types", "TYPES", "--io-rate", "1e8"], "--io-rate and --node-types"),
    (["--node-types", "TYPES", "--storage-rate", "1e8"], "--storage-rate and --node-types"),
])
def test_platform_command_refuses_bad_io_options_in_one_line_and_writes_nothing(tmp_path, capsys, argv, named):
    types = tmp_path / "in" / "types.toml"
    types.parent.mkdir()
    types.write_text(IO_TOML)
    out = tmp_path / "out" / "p.xml"
    with pytest.raises(SystemExit) as stop:
        main(["platform", *[str(types) if a == "TYPES" else a for a in argv], "--out", str(out), "--variants"])
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert message.startswith("batreplay: error:") and named in message and len(message.splitlines()) == 1
    assert not out.parent.exists()


def test_variants_keep_each_nodes_io_rate_and_the_default_storage_follows_the_node_count(tmp_path):
    out = tmp_path / "io.xml"
    written = platform_command(4, 1e9, out, variants=True, io_rate=1e8)
    assert written == [out, *(variant_path(out, v) for v in SCALED_VARIANTS)]
    expected = {"nodes-x2": (8, 1e9, 8e8), "nodes-div2": (2, 1e9, 2e8), "speed-x2": (4, 2e9, 4e8),
                "speed-div2": (4, 5e8, 4e8)}
    for variant, (count, speed, storage) in expected.items():
        path = variant_path(out, variant)
        platform = read_platform(path)
        assert (platform.nb_compute, set(platform.speeds), platform.storage_hosts) == (count, {speed}, ("storage",))
        links = _links(_zone(path.read_text()))
        assert [links[f"{name}_io"] for name in platform.names] == [1e8] * count
        assert links["storage_io"] == storage, variant


def test_variants_keep_a_storage_rate_given_explicitly(tmp_path):
    out = tmp_path / "io.xml"
    platform_command(4, 1e9, out, variants=True, io_rate=1e8, storage_rate=3e8)
    assert [_storage_bandwidth(p) for p in [out, *(variant_path(out, v) for v in SCALED_VARIANTS)]] == [3e8] * 5
    types = tmp_path / "types.toml"
    types.write_text(IO_TOML + "[storage]\nrate = 6e8\n")
    grid = tmp_path / "grid.xml"
    assert main(["platform", "--node-types", str(types), "--out", str(grid), "--variants"]) == 0
    doubled = read_platform(variant_path(grid, "nodes-x2"))
    assert doubled.node_types == {"fat": [0, 1, 2, 3], "thin": [4, 5, 6, 7, 8, 9]}
    assert [h.prop("io_rate") for h in doubled.hosts] == ["100000000.0"] * 4 + ["50000000.0"] * 6
    assert [_storage_bandwidth(p) for p in [grid, *(variant_path(grid, v) for v in SCALED_VARIANTS)]] == [6e8] * 5


def test_scaling_an_io_platform_file_keeps_its_io_without_a_storage_warning(tmp_path, recwarn):
    path = write_platform(tmp_path / "io.xml", 3, 1e9, io_rate=2e8, storage_rate=1e8)
    text = scale_platform(path, 2.0, 1.0)
    assert not recwarn.list  # the storage host is written again, not left out
    links = _links(_zone(text))
    assert [links[f"node_{k}_io"] for k in range(6)] == [2e8] * 6
    assert links["storage_io"] == 12e8  # the file does not say its rate was given: the default, 6 x 2e8
    assert _links(_zone(scale_platform(path, 2.0, 1.0, storage_rate=1e8)))["storage_io"] == 1e8


# --- the engines on such a platform -----------------------------------------------------------------------------

def _workload(path: Path, profiles: dict, jobs: list[tuple[str, float, int, str]]) -> Path:
    path.write_text(json.dumps({"nb_res": 2, "profiles": profiles, "jobs": [
        {"id": job_id, "subtime": subtime, "res": res, "profile": profile, "walltime": 1000}
        for job_id, subtime, res, profile in jobs]}))
    return path


def test_embedded_engine_runs_compute_and_pfs_jobs_on_an_io_platform_and_stops_data_staging_without_labels(tmp_path):
    from batreplay.formats.out_jobs import read_out_jobs
    from batreplay.run.runner import RunError, RunSpec, run

    platform = write_platform(tmp_path / "io.xml", 2, 1e9, io_rate=1e8)
    compute = _workload(tmp_path / "c.json", {"c": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 0}},
                        [("1", 0, 2, "c"), ("2", 1, 1, "c")])
    run(RunSpec.build(workload=compute, platform=platform, scheduler="easy", out_dir=tmp_path / "c"))
    jobs = read_out_jobs(tmp_path / "c" / "out_jobs.csv")
    assert list(jobs["execution_time"]) == [3.0, 3.0] and list(jobs["starting_time"]) == [0.0, 3.0]
    # a reader alone: 1e8 bytes over its node's 1e8 B/s link (the storage link, 2 x 1e8 B/s by default, is not
    # the limit); two readers at once share nothing but the storage link, which carries both at full speed
    readers = _workload(tmp_path / "pfs.json", {"p": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}},
                        [("1", 0, 1, "p"), ("2", 0, 1, "p"), ("3", 5, 1, "p")])
    run(RunSpec.build(workload=readers, platform=platform, scheduler="easy", out_dir=tmp_path / "pfs"))
    assert list(read_out_jobs(tmp_path / "pfs" / "out_jobs.csv")["execution_time"]) == [1.0, 1.0, 1.0]
    staging = _workload(tmp_path / "staging.json", {"p": {"type": "data_staging", "nb_bytes": 1e8, "from": "pfs",
                                                          "to": "pfs"}}, [("1", 0, 1, "p")])
    # batreplay's schedulers give no storage mapping: Batsim aborts on the label, and so does the engine, saying why
    with pytest.raises(RunError, match="storage label 'pfs' is not in the job's storage mapping"):
        run(RunSpec.build(workload=staging, platform=platform, scheduler="easy", out_dir=tmp_path / "staging"))


@pytest.mark.slow
def test_real_batsim_runs_pfs_jobs_at_the_times_the_io_and_storage_links_give(real_batsim, tmp_path):
    """Two 1-node jobs started together each move 1.5e8 bytes: their node links (1e8 B/s) are not the limit, the
    storage link (1.5e8 B/s) is, shared: 0.75e8 B/s each, 2 s. Then one 2-node job reads 3e8 bytes per node alone:
    6e8 bytes through the storage link, 4 s. A compute job on one node takes its flops / speed."""
    from batreplay.formats.out_jobs import read_out_jobs
    from batreplay.run.runner import RunSpec, run

    platform = write_platform(tmp_path / "io.xml", 2, 1e9, io_rate=1e8, storage_rate=1.5e8)
    workload = _workload(tmp_path / "w.json", {
        "rw": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8, "bytes_to_write": 5e7},
        "r3": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 3e8, "bytes_to_write": 0},
        "c": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0},
    }, [("1", 0, 1, "rw"), ("2", 0, 1, "rw"), ("3", 10, 2, "r3"), ("4", 20, 1, "c")])
    run(RunSpec.build(workload=workload, platform=platform, scheduler="easy", out_dir=tmp_path / "real",
                      engine="batsim", batsim=real_batsim))
    jobs = read_out_jobs(tmp_path / "real" / "out_jobs.csv")
    assert list(jobs["final_state"]) == ["COMPLETED_SUCCESSFULLY"] * 4
    assert list(jobs["starting_time"]) == [0.0, 0.0, 10.0, 20.0]
    assert list(jobs["execution_time"]) == [2.0, 2.0, 4.0, 2.0]


def test_a_campaign_generates_the_io_platform_of_a_node_types_file_with_its_storage_rate(tmp_path):
    from types import SimpleNamespace

    from batreplay.campaign.platforms import recorded_platform_text

    (tmp_path / "types.toml").write_text(IO_TOML + "[storage]\nrate = 9e8\n")
    campaign = SimpleNamespace(resolve=lambda name: tmp_path / name)
    text = recorded_platform_text(campaign, SimpleNamespace(node_types="types.toml", platform=None))
    assert _links(_zone(text))["storage_io"] == 9e8
