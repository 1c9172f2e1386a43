"""Links and routes read from a platform (platforms/network.py, the reader): SimGrid's units, and the routes to the
storage host the embedded engine plays jobs that read and write on, or leaves to a real Batsim."""

from __future__ import annotations

import pytest

from batreplay.platforms.generate import cluster_platform, write_platform_text
from batreplay.platforms.network import parse_bandwidth, parse_latency
from batreplay.platforms.node_types import NodeType
from batreplay.platforms.reader import read_platform


@pytest.mark.parametrize("text, value", [("125MBps", 125e6), ("1e8Bps", 1e8), ("1Gbps", 1.25e8), ("2KiBps", 2048.0),
                                         ("1MiBps", 1048576.0), ("3", 3.0), ("100000000.0Bps", 1e8)])
def test_bandwidths_are_read_in_simgrids_units(text, value):
    assert parse_bandwidth(text) == value


@pytest.mark.parametrize("text", ["0Bps", "-1MBps", "1e400Bps", "125 MBps", "125MB", "fast"])
def test_bandwidths_simgrid_refuses_or_the_engine_cannot_use_are_refused(text):
    with pytest.raises(ValueError, match="bandwidth"):
        parse_bandwidth(text)


def test_latencies_are_read_in_simgrids_units():
    assert [parse_latency(t) for t in ("0us", "15ms", "2", "1m", "3ns")] == pytest.approx([0.0, 0.015, 2.0, 60.0, 3e-9],
                                                                                  rel=1e-15)


def _io_text(tmp_path, edit=lambda text: text):
    types = [NodeType("a", 2, 1e9, io_rate=1e8)]
    return read_platform(write_platform_text(tmp_path / "io.xml", edit(cluster_platform(node_types=types))))


def test_a_generated_platform_gives_each_hosts_route_to_the_storage(tmp_path):
    platform = _io_text(tmp_path)
    routes = [platform.network.route(host.name, "storage") for host in platform.hosts]
    assert [[(link.name, link.bandwidth) for link in route] for route in routes] == [
        [("node_0_io", 1e8), ("storage_io", 2e8)], [("node_1_io", 1e8), ("storage_io", 2e8)]]
    assert [link.name for link in platform.network.route("storage", "node_1")] == ["storage_io", "node_1_io"]
    assert not platform.master_on_loopback


@pytest.mark.parametrize("what, edit, words", [
    ("a link shared otherwise", lambda t: t.replace('id="storage_io"', 'id="storage_io" sharing_policy="FATPIPE"'),
     "'storage_io' is not shared as the engine plays links"),
    ("a bandwidth trace", lambda t: t.replace('id="storage_io"', 'id="storage_io" bandwidth_file="bw.txt"'),
     "'storage_io' has a trace file"),
    ("a bypass route", lambda t: t.replace("</zone>", '<bypassRoute src="node_0" dst="storage">'
                                                      '<link_ctn id="storage_io"/></bypassRoute></zone>'),
     "<bypassRoute> elements are not followed"),
    ("a route declared twice", lambda t: t.replace("</zone>", '<route src="storage" dst="node_0">'
                                                              '<link_ctn id="storage_io"/></route></zone>'),
     "declared twice"),
    ("a zero bandwidth", lambda t: t.replace('id="node_1_io" bandwidth="100000000.0Bps"',
                                             'id="node_1_io" bandwidth="0Bps"'), "must be finite and > 0"),
])
def test_readers_on_routes_the_engine_would_time_otherwise_than_simgrid_are_refused(tmp_path, what, edit, words):
    from batreplay.engine.options import EngineError
    from batreplay.engine.profiles import UnsupportedProfileError
    from batreplay.engine.simulator import BatsimEngine

    text = cluster_platform(node_types=[NodeType("a", 2, 1e9, io_rate=1e8)])
    assert edit(text) != text, what  # the edit applies to the generated text
    platform = _io_text(tmp_path, edit)
    workload = {"jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": 10, "profile": "r"}],
                "profiles": {"r": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}}}
    with pytest.raises((UnsupportedProfileError, EngineError), match=words):  # (a bypass route: messages too)
        BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": workload},
                     storage=platform.storage_resources, network=platform.network, master_host=platform.master_host)


def test_a_master_host_without_a_route_to_itself_is_flagged_and_one_over_other_links_has_its_messages_carried(
        tmp_path):
    from batreplay.engine.simulator import BatsimEngine

    def faster(text):  # the master's own link at 10 GB/s: its messages take 0.1 ns, in the link solver
        return text.replace('id="master_loop" bandwidth="125MBps"', 'id="master_loop" bandwidth="10GBps"')

    def alone(text):  # no route to itself: SimGrid carries them over its own loopback (10 GBps, FATPIPE)
        return text.replace('<route src="master_host" dst="master_host">\n      <link_ctn id="master_loop" />\n'
                            '    </route>', "")
    assert _io_text(tmp_path, alone).master_on_loopback
    platform = _io_text(tmp_path, faster)
    assert not platform.master_on_loopback
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": {"jobs": [], "profiles": {}}},
                          storage=platform.storage_resources, network=platform.network, master_host=platform.master_host)
    assert engine.handlers.machine.transfers.active  # (a real Batsim gave the same messages, 2026-11-28)


def test_the_master_hosts_own_route_is_found_whatever_else_the_routes_hold(tmp_path):
    def edit(text):  # a link the engine does not follow, on no route of the master
        return text.replace("</zone>", '<link id="odd" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/></zone>')
    platform = _io_text(tmp_path, edit)
    assert "SPLITDUPLEX" in platform.network.unsupported
    assert not platform.master_on_loopback  # its master_loop route still counts
