"""Routes between hosts (platforms/routing.py) as SimGrid 3.32 gives them.

The expected routes were printed by SimGrid 3.32's ``Host::route_to`` (Debian's libsimgrid 3.32, the one Batsim
4.2.1 is built against) on these very platforms, 2026-11-28: link names in order, bandwidths and latencies. The
engine's use of them is checked against real Batsim runs (``tests/golden/comm-*``)."""

from __future__ import annotations

import pytest

from batreplay.platforms.network import SIMGRID_LOOPBACK
from batreplay.platforms.reader import read_platform

_HEAD = '<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="AS0" routing="Full">\n'
_MASTER = ('<cluster id="m" prefix="master" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="20us">'
           '<prop id="role" value="master"/></cluster>\n'
           '<link id="wan" bandwidth="100MBps" latency="7us"/>\n'
           '<zoneRoute src="c" dst="m" gw_src="c-c_router" gw_dst="masterm_router"><link_ctn id="wan"/></zoneRoute>\n')


def _network(tmp_path, cluster_attributes, master=_MASTER):
    lat = "0us" if "zero latency" in cluster_attributes else "10us"
    text = (_HEAD + f'<cluster id="c" prefix="c-" suffix="" radical="0-2" speed="1Gf" bw="125MBps" lat="{lat}" '
            f'{cluster_attributes.replace("zero latency", "")}/>\n' + master + '</zone>\n</platform>\n')
    path = tmp_path / "platform.xml"
    path.write_text(text)
    return read_platform(path).network


def _names(route):
    return [link.name for link in route]


def test_a_cluster_with_a_backbone_routes_up_backbone_down_and_leaves_through_its_router(tmp_path):
    network = _network(tmp_path, 'bb_bw="1GBps" bb_lat="0us"')
    assert _names(network.route("c-0", "c-1")) == ["c_link_0_UP", "c_backbone", "c_link_1_DOWN"]
    assert _names(network.route("c-1", "c-1")) == ["c_link_1_UP", "c_backbone", "c_link_1_DOWN"]
    assert _names(network.route("c-2", "master0")) == ["c_link_2_UP", "c_backbone", "wan", "m_link_0_DOWN"]
    assert _names(network.route("master0", "c-0")) == ["m_link_0_UP", "wan", "c_backbone", "c_link_0_DOWN"]
    assert _names(network.route("master0", "master0")) == ["m_link_0_UP", "m_link_0_DOWN"]
    route = network.route("c-0", "master0")
    assert [link.bandwidth for link in route] == [125e6, 1e9, 100e6, 125e6]
    assert sum(link.latency for link in route) == pytest.approx(37e-6)
    assert all(link.plain for link in route)
    # SimGrid adds the latency of the link between the zones first, then the way to the source's gateway, then the
    # way from the destination's: wan, c_link_2_UP, c_backbone, m_link_0_DOWN, in that order (others may round
    # otherwise)
    up, backbone, wan, down = network.route("c-2", "master0")
    assert network.latency("c-2", "master0") == ((wan.latency + up.latency) + backbone.latency) + down.latency
    up, backbone, down = network.route("c-0", "c-1")
    assert network.latency("c-0", "c-1") == (up.latency + backbone.latency) + down.latency


def test_shared_private_links_are_one_link_crossed_once(tmp_path):
    network = _network(tmp_path, 'bb_bw="1GBps" bb_lat="0us" sharing_policy="SHARED"')
    assert _names(network.route("c-0", "c-2")) == ["c_link_0", "c_backbone", "c_link_2"]
    assert _names(network.route("c-0", "c-0")) == ["c_link_0", "c_backbone"]


def test_a_cluster_without_backbone_and_one_with_loopbacks(tmp_path):
    assert _names(_network(tmp_path, "").route("c-1", "c-0")) == ["c_link_1_UP", "c_link_0_DOWN"]
    looped = _network(tmp_path, 'bb_bw="1GBps" bb_lat="0us" loopback_bw="10GBps" loopback_lat="0us"')
    (loop,) = looped.route("c-1", "c-1")
    assert (loop.name, loop.bandwidth, loop.plain) == ("c_link_1_loopback", 1e10, False)  # FATPIPE in SimGrid
    assert _names(looped.route("c-1", "c-2")) == ["c_link_1_UP", "c_backbone", "c_link_2_DOWN"]


def test_a_master_host_in_a_full_zone_reached_through_a_zone_route(tmp_path):
    master = ('<zone id="m" routing="Full"><host id="master" speed="1Gf"><prop id="role" value="master"/></host>'
              '</zone>\n<link id="wan" bandwidth="100MBps" latency="7us"/>\n'
              '<zoneRoute src="c" dst="m" gw_src="c-c_router" gw_dst="master"><link_ctn id="wan"/></zoneRoute>\n')
    network = _network(tmp_path, 'bb_bw="1GBps" bb_lat="0us"', master)
    assert _names(network.route("c-0", "master")) == ["c_link_0_UP", "c_backbone", "wan"]
    assert _names(network.route("master", "c-1")) == ["wan", "c_backbone", "c_link_1_DOWN"]
    assert network.route("master", "master") == (SIMGRID_LOOPBACK,)  # no route to itself: SimGrid's own loopback


def test_the_shipped_kth_platform_routes_between_its_clusters_over_the_backbone():
    from batreplay.platforms.shipped import shipped_platform_path

    network = read_platform(shipped_platform_path("kth-sp2")).network
    assert _names(network.route("node_00", "node_01")) == ["compute_00_09_link_0_UP", "compute_00_09_link_1_DOWN"]
    assert _names(network.route("node_00", "node_50")) == ["compute_00_09_link_0_UP", "backbone",
                                                          "compute_10_99_link_50_DOWN"]
    assert _names(network.route("node_15", "master_host0")) == ["compute_10_99_link_15_UP", "backbone",
                                                               "master_link_0_DOWN"]
    assert network.transfer_problem() is None and network.slowest_bandwidth() == 125e6


@pytest.mark.parametrize("attributes, words", [
    ('bb_bw="1GBps" sharing_policy="FATPIPE"', "FATPIPE private links"),
    ('bb_bw="1GBps" limiter_link="1GBps"', "limiter_link"),
])
def test_clusters_the_routes_do_not_follow_are_named(tmp_path, attributes, words):
    network = _network(tmp_path, attributes)
    assert words in network.unsupported
    assert network.route("c-0", "c-1") is None


def test_what_bytes_between_hosts_could_meet_that_the_engine_does_not_play_is_named(tmp_path):
    assert _network(tmp_path, 'bb_bw="1GBps"').transfer_problem() is None  # (latencies are played)
    master = _MASTER.replace('lat="20us"', 'lat="0us"').replace('latency="7us"', 'latency="0us"')
    flat = _network(tmp_path, 'zero latency bb_bw="1GBps" bb_lat="0us"', master)
    assert flat.transfer_problem() is None
    assert flat.slowest_bandwidth() == 100e6  # the wan link
    looped = _network(tmp_path, 'zero latency bb_bw="1GBps" bb_lat="0us" loopback_bw="10GBps"', master)
    assert looped.transfer_problem() is None  # a cluster's loopbacks matter only to bytes a host sends itself
    assert "'c_link_0_loopback' is not shared" in looped.transfer_problem(loopbacks=True)
    fatpipe = _network(tmp_path, 'zero latency bb_bw="1GBps" bb_lat="0us" bb_sharing_policy="FATPIPE"', master)
    assert "'c_backbone' is not shared" in fatpipe.transfer_problem()
    lonely = _network(tmp_path, 'zero latency', master.replace(
        '<zoneRoute src="c" dst="m" gw_src="c-c_router" gw_dst="masterm_router"><link_ctn id="wan"/></zoneRoute>\n',
        ""))
    assert "no zone route from 'c' to 'm'" in lonely.transfer_problem()
    twice = _network(tmp_path, "zero latency", master + master[master.index("<zoneRoute"):])
    assert "declared twice" in twice.unsupported


def test_hosts_of_a_full_zone_without_a_route_between_them_have_an_empty_one_and_to_itself_simgrids_loopback(tmp_path):
    from batreplay.platforms.generate import cluster_platform, write_platform_text
    from batreplay.platforms.node_types import NodeType

    text = cluster_platform(node_types=[NodeType("a", 2, 1e9, io_rate=1e8)])  # routes to the storage and master only
    network = read_platform(write_platform_text(tmp_path / "io.xml", text)).network
    # SimGrid 3.32: no link (a real Batsim ran jobs sending bytes between such hosts in their compute time, pfs-slots)
    assert network.route("node_0", "node_1") == ()
    # to itself: SimGrid's own loopback (a real Batsim moved 1e8 bytes from a storage host to itself in 0.01 s,
    # tests/engine/test_data_staging.py)
    assert network.route("node_1", "node_1") == (SIMGRID_LOOPBACK,)
    assert _names(network.route("storage", "node_1")) == ["storage_io", "node_1_io"]
