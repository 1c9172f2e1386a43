"""Platforms: SimGrid speed strings, reading platforms as Batsim numbers them, generating and scaling them."""

from __future__ import annotations

import itertools
import json
import math
import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.platforms.generate import (
    PlatformScalingWarning,
    cluster_platform,
    platform_command,
    scale_platform,
    variant_path,
    write_platform,
    write_platform_text,
)
from batreplay.platforms.model import Host, Platform
from batreplay.platforms.reader import PlatformError, expand_radical, read_platform
from batreplay.platforms.shipped import (
    REFERENCE_NODE_SPEED,
    SHIPPED_PLATFORMS,
    shipped_platform_path,
    shipped_platform_text,
)
from batreplay.platforms.speed_units import format_speed, parse_pstate_speeds, parse_speed
from conftest import golden_cases, golden_folder


def _simulation_begins(case: str) -> dict:
    with open(golden_folder(case) / "transcript.jsonl", encoding="utf-8") as stream:
        first = json.loads(stream.readline())
    event = first["msg"]["events"][0]
    assert event["type"] == "SIMULATION_BEGINS"
    return event["data"]


def _write(tmp_path: Path, text: str, name: str = "platform.xml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _read_text(tmp_path: Path, text: str) -> Platform:
    return read_platform(_write(tmp_path, text))


def _tree_signature(element: ET.Element) -> tuple:
    """Tag, attributes and children of an element, ignoring whitespace and attribute order."""
    return (element.tag, sorted(element.attrib.items()), [_tree_signature(child) for child in element])


# --------------------------------------------------------------------------------------------------------
# SimGrid speed strings


@pytest.mark.parametrize(
    ("text", "flops"),
    [
        ("1Gf", 1e9),
        ("2.5Gf", 2.5e9),
        ("1000000000f", 1e9),
        ("500Mf", 5e8),
        ("0.5kf", 500.0),
        ("3gigaflops", 3e9),
        ("2Ef", 2e18),
        ("1e9f", 1e9),
        ("1e9", 1e9),  # unit-less: flop/s (deprecated in SimGrid but accepted)
        (" 7Tf ", 7e12),
    ],
)
def test_parse_speed_units(text, flops):
    assert parse_speed(text) == flops


@pytest.mark.parametrize("text", ["", "Gf", "1gf", "1 Gf", "1Gflop", "-1Gf", "nan", "inf", "0x10f", "1e999f"])
def test_parse_speed_refuses(text):
    with pytest.raises(ValueError, match="speed"):
        parse_speed(text)


def test_parse_pstate_speeds():
    assert parse_pstate_speeds("1Gf, 500Mf,100Mf") == [1e9, 5e8, 1e8]
    assert parse_pstate_speeds("2.5Gf") == [2.5e9]
    with pytest.raises(ValueError, match="item 1 is empty"):
        parse_pstate_speeds("1Gf,,2Gf")


@pytest.mark.parametrize(
    ("flops", "text"), [(1e9, "1Gf"), (2.5e9, "2.5Gf"), (5e8, "500Mf"), (1.0, "1f"), (0.1, "0.1f"), (3e12, "3Tf")]
)
def test_format_speed_readable(flops, text):
    assert format_speed(flops) == text


@pytest.mark.parametrize("flops", [0.0, -1.0, math.inf, math.nan])
def test_format_speed_refuses(flops):
    with pytest.raises(ValueError):
        format_speed(flops)


@given(st.floats(min_value=5e-324, max_value=1.7976931348623157e308, allow_nan=False, allow_infinity=False))
def test_format_speed_round_trips_exactly(flops):
    assert parse_speed(format_speed(flops)) == flops


def test_expand_radical():
    assert expand_radical("0-3") == [0, 1, 2, 3]
    assert expand_radical("0-1,4-7") == [0, 1, 4, 5, 6, 7]
    assert expand_radical("5") == [5]
    for bad in ("5-3", "a-b", "1-2-3", "", "1,,2"):
        with pytest.raises(ValueError, match="radical"):
            expand_radical(bad)


# --------------------------------------------------------------------------------------------------------
# Golden platforms: same ids and names as Batsim 4.2.1 gave


@pytest.mark.parametrize("case", golden_cases(sharing=True))
def test_golden_platform_numbered_as_batsim(golden_dir, case):
    begins = _simulation_begins(case)
    platform = read_platform(golden_folder(case) / "platform.xml")
    expected = [(r["id"], r["name"]) for r in begins["compute_resources"]]
    assert [(h.id, h.name) for h in platform.hosts] == expected
    assert platform.nb_compute == begins["nb_compute_resources"]
    assert platform.storage_hosts == ()
    assert platform.master_host == "master_host0"  # cluster prefix "master_host", radical "0-0"
    assert platform.master_host not in platform.names


def test_golden_multicore_hosts_have_their_cores(golden_dir):
    """The ``core`` attribute of a cluster gives each of its hosts that many cores; 1 when absent."""
    assert read_platform(golden_folder("multicore") / "platform.xml").cores == [4, 4]
    assert set(read_platform(golden_folder("sharing") / "platform.xml").cores) == {1}


def test_core_attribute_must_be_a_positive_integer(tmp_path):
    for bad, why in (("0", "need at least 1"), ("two", "not an integer")):
        path = _write(tmp_path, f"""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/>
  <host id="node_0" speed="1Gf" core="{bad}"/>
</zone></platform>""")
        with pytest.raises(PlatformError, match=f"platform.xml:4: .*core.*{why}"):
            read_platform(path)


def test_golden_order_is_lexicographic(golden_dir):
    platform = read_platform(golden_dir / "order" / "platform.xml")
    assert platform.names[:5] == ["node_0", "node_1", "node_10", "node_11", "node_2"]


def test_golden_ptask_speeds(golden_dir):
    # The golden README: hosts of two speeds, 1 and 2.5 Gflop/s.
    platform = read_platform(golden_dir / "ptask" / "platform.xml")
    assert dict(zip(platform.names, platform.speeds.tolist())) == {
        "fast_0": 2.5e9,
        "fast_1": 2.5e9,
        "slow_0": 1e9,
        "slow_1": 1e9,
    }


def test_golden_ptask_execution_times_follow_speeds(golden_dir):
    """Batsim's recorded times: parallel_homogeneous (com 0) lasts cpu / slowest allocated speed, by our ids."""
    case = golden_dir / "ptask"
    speeds = read_platform(case / "platform.xml").speeds
    profiles = json.loads((case / "workload.json").read_text())["profiles"]
    jobs = pd.read_csv(case / "out_jobs.csv")
    done = jobs[jobs["final_state"] == "COMPLETED_SUCCESSFULLY"]
    checked = 0
    for _, job in done.iterrows():
        profile = profiles[job["profile"]]
        alloc = list(ProcSet.from_str(str(job["allocated_resources"])))
        if profile["type"] == "parallel_homogeneous":
            expected = profile["cpu"] / speeds[alloc].min()
        elif profile["type"] == "parallel":
            expected = max(c / speeds[r] for c, r in zip(profile["cpu"], alloc))
        else:
            continue
        assert job["execution_time"] == pytest.approx(expected, abs=1e-6)
        checked += 1
    assert checked == 4  # h1, h2, h3, p2


def test_generated_small_platform_matches_golden_form(golden_dir):
    """4 hosts at 1 Gflop/s: the same elements and attributes as the platform Batsim ran in the golden cases."""
    golden = ET.parse(golden_dir / "delays" / "platform.xml").getroot()
    generated = ET.fromstring(cluster_platform(4, 1e9))
    assert _tree_signature(generated) == _tree_signature(golden)
    text = cluster_platform(4, 1e9)
    assert text.splitlines()[1] == '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'


# --------------------------------------------------------------------------------------------------------
# Generator


@pytest.mark.parametrize(("nodes", "width"), [(1, 1), (10, 1), (11, 2), (12, 2), (100, 2), (101, 3), (128, 3)])
def test_generated_hosts_zero_padded_in_node_order(tmp_path, nodes, width):
    platform = _read_text(tmp_path, cluster_platform(nodes, 1e9))
    assert platform.nb_compute == nodes
    assert platform.names == [f"node_{i:0{width}d}" for i in range(nodes)]
    assert [h.id for h in platform.hosts] == list(range(nodes))
    assert np.array_equal(platform.speeds, np.full(nodes, 1e9))


def test_generated_twelve_hosts_differ_from_unpadded_golden_order(tmp_path, golden_dir):
    # Without padding Batsim gives id 2 to node_10 (golden "order"); with padding id 2 is node 2.
    golden = read_platform(golden_dir / "order" / "platform.xml")
    generated = _read_text(tmp_path, cluster_platform(12, 1e9))
    assert golden.names[2] == "node_10"
    assert generated.names[2] == "node_02"
    assert generated.names[10] == "node_10"


def test_generated_heterogeneous_groups(tmp_path):
    platform = _read_text(tmp_path, cluster_platform(groups=[(2, 1e9), (3, 2.5e9), (7, 1e9)]))
    assert platform.names == [f"node_{i:02d}" for i in range(12)]
    assert platform.speeds.tolist() == [1e9] * 2 + [2.5e9] * 3 + [1e9] * 7
    assert platform.speed_groups() == [(2, 1e9), (3, 2.5e9), (7, 1e9)]


def test_generated_routes_join_every_pair_of_clusters():
    root = ET.fromstring(cluster_platform(groups=[(5, 1e9), (120, 3e9)]))
    clusters = {c.get("id"): c for c in root.iter("cluster")}
    # SimGrid's router name: prefix + id + "_router" + suffix (golden: "node_compute_router").
    routers = {cid: c.get("prefix") + cid + "_router" + c.get("suffix") for cid, c in clusters.items()}
    routes = {}
    for route in root.iter("zoneRoute"):
        routes[frozenset((route.get("src"), route.get("dst")))] = route
        assert route.get("gw_src") == routers[route.get("src")]
        assert route.get("gw_dst") == routers[route.get("dst")]
        assert [link.get("id") for link in route] == ["backbone"]
    assert set(routes) == {frozenset(pair) for pair in itertools.combinations(clusters, 2)}
    assert len(clusters) == 5  # 0-4 | 5-9 | 10-99 at 3 Gf, 100-124 | master
    assert all(link.get("latency") == "0us" for link in root.iter("link"))
    assert all(c.get("lat") == "0us" for c in clusters.values())


_SPEEDS = st.one_of(
    st.sampled_from([1e9, 2.5e9, 5e8, 3.3e9]),
    st.floats(min_value=1.0, max_value=1e18, allow_nan=False, allow_infinity=False),
)


@st.composite
def node_groups(draw) -> list[tuple[int, float]]:
    """N in 1..2000 nodes cut into 1..6 consecutive groups, each with its own speed."""
    total = draw(st.integers(min_value=1, max_value=2000))
    cuts = draw(st.lists(st.integers(min_value=1, max_value=max(1, total - 1)), max_size=5, unique=True))
    bounds = [0, *sorted(c for c in cuts if c < total), total]
    return [(hi - lo, draw(_SPEEDS)) for lo, hi in zip(bounds, bounds[1:])]


@given(groups=node_groups())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_property_ids_follow_node_order_and_speeds_round_trip(tmp_path_factory, groups):
    path = tmp_path_factory.mktemp("prop") / "p.xml"
    write_platform(path, groups=groups)
    platform = read_platform(path)
    total = sum(count for count, _ in groups)
    width = len(str(total - 1))
    assert platform.names == [f"node_{i:0{width}d}" for i in range(total)]
    expected = [speed for count, speed in groups for _ in range(count)]
    assert platform.speeds.tolist() == expected  # exact float equality


@pytest.mark.parametrize("n", [1, 37, 2000])
def test_property_single_speed_extremes(tmp_path, n):
    platform = _read_text(tmp_path, cluster_platform(n, 1.1e9))
    assert platform.nb_compute == n
    assert platform.names[-1] == f"node_{n - 1}"
    assert set(platform.speeds.tolist()) == {1.1e9}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"nodes": 0, "speed": 1e9}, "integer >= 1"),
        ({"nodes": 2.0, "speed": 1e9}, "integer >= 1"),
        ({"nodes": True, "speed": 1e9}, "integer >= 1"),
        ({"nodes": 4, "speed": 0.0}, "speed"),
        ({"nodes": 4, "speed": math.nan}, "speed"),
        ({"nodes": 4}, "give nodes and speed"),
        ({"nodes": 4, "speed": 1e9, "groups": [(4, 1e9)]}, "not both"),
        ({"nodes": 5, "groups": [(4, 1e9)]}, "differs"),
        ({"groups": []}, "at least one"),
        ({"groups": [(4,)]}, "pair"),
        ({"nodes": 4, "speed": 1e9, "prefix": ""}, "prefix"),
        ({"nodes": 4, "speed": 1e9, "prefix": "node "}, "prefix"),
        ({"nodes": 4, "speed": 1e9, "prefix": "master_host"}, "master"),
    ],
)
def test_generator_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        cluster_platform(**kwargs)


def test_write_platform_is_atomic_and_readable(tmp_path, monkeypatch):
    path = write_platform(tmp_path / "sub" / "p.xml", 3, 2e9)
    assert read_platform(path).speeds.tolist() == [2e9] * 3
    assert stat.S_IMODE(path.stat().st_mode) & 0o044  # not left private like a mkstemp file
    assert sorted(p.name for p in path.parent.iterdir()) == ["p.xml"]

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_platform_text(path, "<platform/>")
    assert read_platform(path).nb_compute == 3  # previous content intact
    assert sorted(p.name for p in path.parent.iterdir()) == ["p.xml"]  # temporary file removed


# --------------------------------------------------------------------------------------------------------
# Reader: other SimGrid forms, roles, errors

_HEADER = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"


def test_reader_understands_nested_zones_hosts_pstates_roles(tmp_path):
    text = _HEADER + """<platform version="4.1">
  <zone id="world" routing="Full">
    <zone id="site" routing="Floyd">
      <prop id="site_prop" value="x"/>
      <cluster id="c" prefix="cn-" suffix=".site" radical="0-1,4-5" speed="1Gf,500Mf" bw="1GBps" lat="0us"/>
      <host id="big" speed="100Mf, 4Gf" pstate="1"><prop id="role" value="compute_node"/><disk id="d" read_bw="1GBps" write_bw="1GBps"/></host>
      <host id="disk0" speed="1Gf"><prop id="role" value="storage"/></host>
      <link id="l" bandwidth="1GBps" latency="0us"/>
    </zone>
    <zone id="cab" routing="Cluster">
      <cabinet id="cb" prefix="k" suffix="" radical="1-2" speed="2kf" bw="1GBps" lat="0us"/>
      <backbone id="bb" bandwidth="1GBps" latency="0us"/>
    </zone>
    <host id="master_host" speed="1Gf"/>
    <peer id="p9" speed="3f" bw_in="1Bps" bw_out="1Bps"/>
  </zone>
</platform>
"""
    platform = _read_text(tmp_path, text)
    # byte order: uppercase < lowercase, '-' (0x2d) < digits
    assert platform.names == ["big", "cn-0.site", "cn-1.site", "cn-4.site", "cn-5.site", "k1", "k2", "p9"]
    assert platform.speeds.tolist() == [4e9, 1e9, 1e9, 1e9, 1e9, 2e3, 2e3, 3.0]
    assert platform.master_host == "master_host"
    assert platform.storage_hosts == ("disk0",)
    assert platform.id_of("k1") == 5
    # the storage host is numbered after the compute hosts and keeps its properties (sent in SIMULATION_BEGINS)
    assert [(h.id, h.name) for h in platform.storage] == [(8, "disk0")]
    assert platform.storage_resources == [("disk0", {"role": "storage"}, {"site_prop": "x"})]


def test_reader_master_option_name(tmp_path):
    text = _HEADER + """<platform version="4.1"><zone id="z" routing="Full">
  <cluster id="c" prefix="n" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="0us"/>
</zone></platform>"""
    platform = read_platform(_write(tmp_path, text), master_host="n2")
    assert platform.master_host == "n2"
    assert platform.names == ["n0", "n1"]


_CLUSTER = '<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="0us"/>'
_MASTER = '<host id="master_host" speed="1Gf"/>'


def _platform(body: str, version: str = "4.1") -> str:
    """Lines 1-2 header, 3 <platform>, 4 <zone>, body from line 5."""
    return _HEADER + f'<platform version="{version}">\n<zone id="z" routing="Full">\n{body}\n</zone>\n</platform>\n'


def _cluster(radical: str = "0-1", speed: str = "1Gf", extra: str = "") -> str:
    return f'<cluster id="c" prefix="n" suffix="" radical="{radical}" speed="{speed}" bw="1GBps" lat="0us"{extra}/>'


_TORUS = ' topology="TORUS" topo_parameters="2,2,2"'
_TWO_MASTERS = _MASTER + "\n" + _CLUSTER + '\n<host id="m2" speed="1Gf"><prop id="role" value="master"/></host>'


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        (_platform(_CLUSTER + "\n<host id='m' speed='1Gf'>"), 7, "not well-formed"),
        ("<?xml version='1.0'?>\n<zone id='z' routing='Full'/>\n", 2, "root element"),
        (_platform(_CLUSTER + _MASTER, version="3"), 3, "version '3'"),
        (_platform(_MASTER + "\n" + _cluster().replace(' speed="1Gf"', "")), 6, "missing attribute 'speed'"),
        (_platform(_MASTER + "\n" + _cluster(speed="1gf")), 6, "unknown unit 'gf'"),
        (_platform(_MASTER + "\n" + _cluster(radical="3-1")), 6, "radical"),
        (_platform(_MASTER + '\n<host id="h" speed="1Gf,2Gf" pstate="2"/>'), 6, "pstate"),
        (_platform(_MASTER + '\n<host id="h" speed="1Gf"><prop id="role" value="boss"/></host>'), 6, "role 'boss'"),
        (_platform(_MASTER + "\n" + _CLUSTER + '\n<host id="n1" speed="1Gf"/>'), 7, "already defined at line 6"),
        (_platform(_MASTER + "\n" + _CLUSTER + '\n<gizmo id="g"/>'), 7, "unsupported element"),
        (_platform(_MASTER + "\n" + _cluster(radical="0-7", extra=_TORUS)), 6, "topology 'TORUS'"),
        (_platform(_MASTER + '\n<host id="h" speed="1Gf" availability_file="a.txt"/>'), 6, "traces are not supported"),
        (_platform(_MASTER + '\n<host id="h" speed="0f"/>'), 6, "speed 0.0"),
        (_platform(_TWO_MASTERS), None, "found: master_host, m2"),
        (_platform(_CLUSTER), None, "found: none"),
        (_platform(_MASTER), None, "no compute host"),
    ],
)
def test_reader_errors_name_file_line_element(tmp_path, text, line, match):
    path = _write(tmp_path, text, "bad.xml")
    with pytest.raises(PlatformError, match=match) as info:
        read_platform(path)
    assert str(path) in str(info.value)
    assert info.value.line == line
    if line is not None:
        assert f"bad.xml:{line}:" in str(info.value)


def test_reader_error_names_element(tmp_path):
    cluster = _cluster(speed="fast").replace('id="c"', 'id="gpu"')
    path = _write(tmp_path, _platform(_MASTER + "\n" + cluster))
    with pytest.raises(PlatformError, match=r"<cluster id='gpu'>: attribute 'speed'") as info:
        read_platform(path)
    assert info.value.element == "<cluster id='gpu'>"


def test_reader_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_platform(tmp_path / "nope.xml")


def test_platform_model_validates():
    hosts = (Host(0, "a", 1e9), Host(1, "b", 2e9))
    platform = Platform(hosts=hosts, master_host="m")
    assert platform.nb_compute == 2
    assert platform.speeds.dtype == np.float64
    with pytest.raises(KeyError):
        platform.id_of("zz")
    with pytest.raises(ValueError, match="id 5"):
        Platform(hosts=(Host(5, "a", 1e9),), master_host="m")
    with pytest.raises(ValueError, match="lexicographic"):
        Platform(hosts=(Host(0, "b", 1e9), Host(1, "a", 1e9)), master_host="m")
    with pytest.raises(ValueError, match="speed"):
        Platform(hosts=(Host(0, "a", 0.0),), master_host="m")
    with pytest.raises(ValueError, match="no compute host"):
        Platform(hosts=(), master_host="m")


# --------------------------------------------------------------------------------------------------------
# Scaled variants (Madon et al. 2024, Section 5.2: infra*2, infra/2, perf*2, perf/2)


def test_scale_kth_platform_four_ways(tmp_path):
    base = read_platform(shipped_platform_path("kth-sp2"))
    cases = {(2.0, 1.0): (200, 1e9), (0.5, 1.0): (50, 1e9), (1.0, 2.0): (100, 2e9), (1.0, 0.5): (100, 5e8)}
    for (nodes_factor, speed_factor), (nodes, speed) in cases.items():
        scaled = _read_text(tmp_path, scale_platform(base, nodes_factor, speed_factor))
        assert scaled.nb_compute == nodes
        assert set(scaled.speeds.tolist()) == {speed}
        assert scaled.names == [f"node_{i:0{len(str(nodes - 1))}d}" for i in range(nodes)]


def test_scale_heterogeneous_golden_from_path(tmp_path, golden_dir):
    # ptask: ids 0-1 are fast (2.5 Gf), 2-3 slow (1 Gf); groups are kept in id order.
    halved = _read_text(tmp_path, scale_platform(golden_dir / "ptask" / "platform.xml", nodes_factor=0.5))
    assert halved.speeds.tolist() == [2.5e9, 1e9]
    faster = _read_text(tmp_path, scale_platform(golden_dir / "ptask" / "platform.xml", speed_factor=2.0))
    assert faster.speeds.tolist() == [5e9, 5e9, 2e9, 2e9]


def test_scale_rounds_odd_counts_half_up_with_warning(tmp_path):
    base = _read_text(tmp_path, cluster_platform(groups=[(5, 1e9), (1, 2e9)]))
    with pytest.warns(PlatformScalingWarning) as record:
        halved = _read_text(tmp_path, scale_platform(base, nodes_factor=0.5))
    assert halved.speed_groups() == [(3, 1e9), (1, 2e9)]  # 2.5 -> 3 ; 0.5 -> 1 (never 0)
    assert len(record) == 2
    with pytest.raises(ValueError, match="would round to 3"):
        scale_platform(base, nodes_factor=0.5, exact=True)


def test_scale_reports_storage_hosts_left_out(tmp_path):
    base = Platform(hosts=(Host(0, "a", 1e9), Host(1, "b", 1e9)), master_host="m", storage_hosts=("disk0",))
    with pytest.warns(PlatformScalingWarning, match="disk0"):
        scaled = _read_text(tmp_path, scale_platform(base, speed_factor=2.0))
    assert scaled.storage_hosts == ()
    assert scaled.speeds.tolist() == [2e9, 2e9]


@pytest.mark.parametrize("factor", [0.0, -2.0, math.inf, math.nan])
def test_scale_refuses_bad_factors(factor):
    base = Platform(hosts=(Host(0, "a", 1e9),), master_host="m")
    with pytest.raises(ValueError, match="finite number > 0"):
        scale_platform(base, nodes_factor=factor)
    with pytest.raises(ValueError, match="finite number > 0"):
        scale_platform(base, speed_factor=factor)


def test_platform_command_writes_base_and_variants(tmp_path):
    out = tmp_path / "mini.xml"
    with pytest.warns(PlatformScalingWarning, match="5 nodes"):
        written = platform_command(5, "1Gf", out, variants=True)
    assert [p.name for p in written] == [
        "mini.xml",
        "mini-nodes-x2.xml",
        "mini-nodes-div2.xml",
        "mini-speed-x2.xml",
        "mini-speed-div2.xml",
    ]
    read = [read_platform(p) for p in written]
    assert [p.nb_compute for p in read] == [5, 10, 3, 5, 5]
    assert [float(p.speeds[0]) for p in read] == [1e9, 1e9, 1e9, 2e9, 5e8]
    assert variant_path(out, "speed-x2") == written[3]


def test_platform_command_without_variants(tmp_path):
    written = platform_command(8, 2.5e9, tmp_path / "p.xml")
    assert written == [tmp_path / "p.xml"]
    assert read_platform(written[0]).speeds.tolist() == [2.5e9] * 8
    with pytest.raises(ValueError, match="unknown unit"):
        platform_command(8, "2.5GHz", tmp_path / "q.xml")


# --------------------------------------------------------------------------------------------------------
# Shipped platforms


@pytest.mark.parametrize(("name", "nodes"), [("kth-sp2", 100), ("sdsc-sp2", 128)])
def test_shipped_platforms(name, nodes):
    path = shipped_platform_path(name)
    assert path == SHIPPED_PLATFORMS[name]
    assert path.read_text(encoding="utf-8") == shipped_platform_text(name)  # regenerating changes nothing
    platform = read_platform(path)
    assert platform.nb_compute == nodes  # MaxNodes of the PWA logs (workloads README)
    assert platform.names[0] == "node_" + "0" * len(str(nodes - 1))
    assert platform.names[-1] == f"node_{nodes - 1}"
    assert set(platform.speeds.tolist()) == {REFERENCE_NODE_SPEED}


def test_shipped_kth_matches_golden_kth2000_resources(golden_dir):
    # Same machine as the golden kth2000 run (100 hosts at 1 Gf), only the names are padded.
    golden = read_platform(golden_dir / "kth2000" / "platform.xml")
    shipped = read_platform(shipped_platform_path("kth-sp2"))
    assert shipped.nb_compute == golden.nb_compute
    assert np.array_equal(shipped.speeds, golden.speeds)
    def node_numbers(platform):
        return sorted(int(name.removeprefix("node_")) for name in platform.names)

    assert node_numbers(shipped) == node_numbers(golden) == list(range(100))


def test_shipped_unknown_name():
    with pytest.raises(KeyError, match="kth-sp2"):
        shipped_platform_path("ctc-sp2")
