"""One limit on platform sizes (audit issue 25, item 3): :data:`MAX_HOSTS` compute hosts, the master host not
counted. The reader (``batreplay run``), the generator, node types files and ``batreplay platform --variants`` all
apply it, so that ``batreplay platform`` never writes a platform that ``batreplay run`` refuses; and the rounded
node counts of ``--variants`` are told in one line each, not by a Python warning with its source line."""

from __future__ import annotations

import warnings

import pytest

from batreplay.platforms.generate import cluster_platform, platform_command
from batreplay.platforms.node_types import NodeType, NodeTypeError, read_node_types
from batreplay.platforms.reader import MAX_HOSTS, PlatformError, read_platform

MASTER = '<cluster id="m" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="1GBps" lat="0us">' \
         '<prop id="role" value="master"/></cluster>\n'


def _platform(path, body: str):
    path.write_text(f'<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n{body}'
                    '</zone>\n</platform>\n')
    return path


def _cluster(radical: str, cid: str = "c", prefix: str = "n", role: str | None = None) -> str:
    prop = f'<prop id="role" value="{role}"/>' if role else ""
    return (f'<cluster id="{cid}" prefix="{prefix}" suffix="" radical="{radical}" speed="1Gf" bw="1GBps" '
            f'lat="0us">{prop}</cluster>\n')


def test_the_reader_counts_compute_hosts_only(tmp_path):
    """10 compute hosts and the master fit a limit of 10 (they were refused as 11 hosts); 11 do not."""
    assert read_platform(_platform(tmp_path / "ten.xml", _cluster("0-9") + MASTER), max_hosts=10).nb_compute == 10
    with pytest.raises(PlatformError, match=r"declares 11 compute hosts; .* would have 11, more than the 10 compute "
                                            r"hosts batreplay simulates \(the master host is not counted\)"):
        read_platform(_platform(tmp_path / "eleven.xml", _cluster("0-10") + MASTER), max_hosts=10)
    # the master as a single host, after the compute hosts
    single = _platform(tmp_path / "single.xml", _cluster("0-9") + '<host id="master_host" speed="1Gf"/>\n')
    assert read_platform(single, max_hosts=10).master_host == "master_host"
    # storage hosts are not compute hosts either, and have the same bound of their own
    storage = _platform(tmp_path / "storage.xml", _cluster("0-9") + _cluster("0-8", "s", "disk", "storage") + MASTER)
    assert len(read_platform(storage, max_hosts=10).storage_hosts) == 9
    storage = _platform(tmp_path / "storage11.xml", _cluster("0-10", "s", "disk", "storage") + _cluster("0-0")
                        + MASTER)
    with pytest.raises(PlatformError, match="declares 11 master and storage hosts"):
        read_platform(storage, max_hosts=10)


def test_a_master_host_named_in_a_cluster_is_not_counted(tmp_path):
    """With ``--master-host n10``, the host n10 of a cluster 0-10 is the master: 10 compute hosts remain."""
    path = _platform(tmp_path / "named.xml", _cluster("0-10"))
    platform = read_platform(path, master_host="n10", max_hosts=10)
    assert (platform.nb_compute, platform.master_host) == (10, "n10")
    with pytest.raises(PlatformError, match="declares 11 compute hosts"):
        read_platform(path, master_host="n11", max_hosts=10)


def test_the_generator_writes_exactly_the_limit_and_refuses_one_more(tmp_path):
    text = cluster_platform(MAX_HOSTS, 1e9)  # text only: reading it back takes ~10 s (see the reader tests above)
    assert 'radical="100000-999999"' in text and 'prefix="master_host"' in text
    with pytest.raises(ValueError, match=r"1,000,001 compute nodes, more than the 1,000,000 batreplay simulates"):
        cluster_platform(MAX_HOSTS + 1, 1e9)
    with pytest.raises(ValueError, match=r"1,200,000 compute nodes"):
        cluster_platform(groups=[(600_000, 1e9), (600_000, 2e9)])


@pytest.mark.parametrize("count", [10_000_000, 2**62, MAX_HOSTS + 1])
def test_node_type_counts_above_the_limit_are_refused(tmp_path, count):
    path = tmp_path / "types.toml"
    path.write_text(f'[[node_types]]\nname = "big"\ncount = {count}\nspeed = 1e9\n')
    with pytest.raises(NodeTypeError, match=rf"types\.toml: node type 1: node type 'big': count = {count:,}, more "
                                            r"than the 1,000,000 compute nodes batreplay simulates"):
        read_node_types(path)
    assert NodeType("big", MAX_HOSTS, 1e9).count == MAX_HOSTS


def test_node_types_above_the_limit_in_all_are_refused(tmp_path):
    path = tmp_path / "types.toml"
    path.write_text('[[node_types]]\nname = "a"\ncount = 600000\nspeed = 1e9\n'
                    '[[node_types]]\nname = "b"\ncount = 600000\nspeed = 2e9\n')
    with pytest.raises(NodeTypeError, match=r"types\.toml: node type 2: with it the node types have 1,200,000 nodes "
                                            r"in all, more than the 1,000,000 compute nodes"):
        read_node_types(path)
    path.write_text(path.read_text().replace("600000", "500000"))
    assert sum(t.count for t in read_node_types(path)) == MAX_HOSTS


@pytest.mark.parametrize(("line", "message"), [
    ('speed = true', "speed = True, need a number"),
    ('speed = "1e9"', "speed = '1e9', need a number"),
    ('speed = 1' + '0' * 400, "need a finite number of flop/s"),
])
def test_node_type_speeds_are_numbers(tmp_path, line, message):
    """A boolean speed was taken as 1 flop/s and a string as its number; an integer beyond a float raised
    OverflowError (a traceback)."""
    path = tmp_path / "types.toml"
    path.write_text(f'[[node_types]]\nname = "a"\ncount = 1\n{line}\n')
    with pytest.raises(NodeTypeError, match=message):
        read_node_types(path)


def test_node_type_names_end_at_the_last_allowed_character():
    """``$`` let a name end with a newline, written into the platform's properties."""
    with pytest.raises(NodeTypeError, match="use letters, digits"):
        NodeType("fat\n", 1, 1e9)


def test_platform_command_refuses_what_run_refuses_and_writes_nothing(tmp_path):
    out = tmp_path / "p.xml"
    with pytest.raises(ValueError, match=r"--nodes 100000000: more than the 1,000,000 compute nodes"):
        platform_command(100_000_000, None, out)
    types = [NodeType("a", 300_000, 1e9), NodeType("b", 300_000, 2e9)]
    with pytest.raises(ValueError, match=r"--variants: variant nodes-x2 would have 1,200,000 compute nodes, more "
                                         r"than the 1,000,000 batreplay simulates: give at most 500,000 nodes"):
        platform_command(None, None, out, variants=True, node_types=types)
    with pytest.raises(ValueError, match=r"--variants: variant speed-x2 of node type 'b': 1e\+308 flop/s x 2 = inf "
                                         r"is not a finite speed >= 2.23e-308"):
        platform_command(None, None, out, variants=True, node_types=[NodeType("a", 2, 1e9), NodeType("b", 2, 1e308)])
    with pytest.raises(ValueError, match=r"variant speed-div2: 4e-308 flop/s x 0.5 = 2e-308 is not a finite speed"):
        platform_command(3, 4e-308, out, variants=True)
    assert list(tmp_path.iterdir()) == []


def test_variants_reach_the_limit_exactly(tmp_path, monkeypatch):
    import batreplay.platforms.generate as generate

    monkeypatch.setattr(generate, "MAX_HOSTS", 10)  # (the real one: 500,000 nodes, seconds to write and read)
    with pytest.raises(ValueError, match=r"variant nodes-x2 would have 12 compute nodes, more than the 10 batreplay "
                                         r"simulates: give at most 5 nodes in all"):
        platform_command(6, None, tmp_path / "six.xml", variants=True)
    written = platform_command(5, None, tmp_path / "five.xml", variants=True, on_note=lambda text: None)
    assert read_platform(written[1]).nb_compute == 10


def test_speed_goes_with_nodes_only(tmp_path):
    """--speed was silently ignored with --node-types; without --speed, --nodes gets 1 Gflop/s."""
    with pytest.raises(ValueError, match=r"--speed and --node-types: each node type gives its own speed"):
        platform_command(None, 2e9, tmp_path / "t.xml", node_types=[NodeType("a", 2, 1e9)])
    (path,) = platform_command(4, None, tmp_path / "d.xml")
    assert read_platform(path).speeds.tolist() == [1e9] * 4


def test_variant_roundings_are_notes_not_warnings(tmp_path):
    notes: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        platform_command(None, None, tmp_path / "o.xml", variants=True, on_note=notes.append,
                         node_types=[NodeType("a", 3, 1e9), NodeType("b", 4, 1e9), NodeType("c", 5, 2e9)])
    assert notes == ["o-nodes-div2.xml: node type 'a': 3 nodes x 0.5 = 1.5 is not a whole number >= 1: rounded to 2 "
                     "nodes",
                     "o-nodes-div2.xml: node type 'c': 5 nodes x 0.5 = 2.5 is not a whole number >= 1: rounded to 3 "
                     "nodes"]
    assert read_platform(tmp_path / "o-nodes-div2.xml").node_types == {"a": [0, 1], "b": [2, 3], "c": [4, 5, 6]}
    from batreplay.platforms.generate import scaled_count

    assert [scaled_count(n, 0.5) for n in (1, 2, 3, 5)] == [1, 1, 2, 3]


def test_cores_and_speeds_that_simgrid_cannot_read_are_refused(tmp_path):
    """Real Batsim aborted on ``core="2147483648"`` and stopped on ``speed="5e-324f"`` ("value out of range"), which
    ``batreplay platform`` wrote and the embedded engine ran."""
    from batreplay.platforms.reader import MAX_CORES, MIN_SPEED

    assert (MAX_CORES, MIN_SPEED) == (2**31 - 1, 2.2250738585072014e-308)
    assert NodeType("a", 1, MIN_SPEED, cores=MAX_CORES).cores == MAX_CORES
    with pytest.raises(NodeTypeError, match="cores = 2147483648, more than the 2147483647 SimGrid reads"):
        NodeType("a", 1, 1e9, cores=2**31)
    with pytest.raises(NodeTypeError, match=r"speed = 5e-324, need a finite number of flop/s >= 2.23e-308"):
        NodeType("a", 1, 5e-324)
    with pytest.raises(ValueError, match=r"--speed 5e-324: the node speed must be a finite number of flop/s >= "):
        platform_command(2, 5e-324, tmp_path / "p.xml")
    big = _platform(tmp_path / "cores.xml", MASTER + '<host id="n" speed="1Gf" core="2147483648"/>\n')
    with pytest.raises(PlatformError, match=r"cores\.xml:5: <host id='n'>: attribute 'core': 2147483648 cores, more "
                                            r"than the 2147483647 SimGrid reads"):
        read_platform(big)
    slow = _platform(tmp_path / "slow.xml", MASTER + '<host id="n" speed="5e-324f"/>\n')
    with pytest.raises(PlatformError, match=r"slow\.xml:5: <host id='n'>: compute host 'n' has speed 5e-324 flop/s, "
                                            r"Batsim needs at least 2.23e-308"):
        read_platform(slow)
    assert list(tmp_path.glob("p*.xml")) == []
