"""The Dask executor on a local Dask cluster (two worker processes): the quick campaign gives byte-identical
out_jobs.csv and the same metrics as the local executor, each instance in a process of its own."""

from __future__ import annotations

import json
import os

import pytest
from conftest import REPO_ROOT
from rich.console import Console

from batreplay.campaign.executors import LocalExecutor, make_executor
from batreplay.campaign.runner import run_campaign
from batreplay.campaign.spec import load_campaign
from batreplay.campaign.worker import INSTANCE_MANIFEST

distributed = pytest.importorskip("distributed")

QUICK = REPO_ROOT / "expe" / "quick.toml"
QUIET = Console(quiet=True)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as local_cluster:
        yield local_cluster


@pytest.mark.slow
def test_dask_executor_gives_the_local_results(cluster, tmp_path):
    with distributed.Client(cluster.scheduler_address) as client:
        worker_pids = set(client.run(os.getpid).values())
    dask_spec = load_campaign(QUICK, output_root=tmp_path / "dask")
    executor = make_executor("dask", scheduler_address=cluster.scheduler_address)
    summary = run_campaign(dask_spec, executor=executor, console=QUIET, show_progress=False)
    assert summary.complete and not summary.failed and len(summary.done) == 8

    local_spec = load_campaign(QUICK, output_root=tmp_path / "local")
    local = run_campaign(local_spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    assert local.complete

    for instance in dask_spec.instances():
        ran_on_dask, ran_locally = dask_spec.output_root / instance.id, local_spec.output_root / instance.id
        assert (ran_on_dask / "out_jobs.csv").read_bytes() == (ran_locally / "out_jobs.csv").read_bytes()
        assert (ran_on_dask / "jobs.csv").read_bytes() == (ran_locally / "jobs.csv").read_bytes()
        metrics = json.loads((ran_on_dask / "metrics.json").read_text())
        assert metrics == json.loads((ran_locally / "metrics.json").read_text())
        manifest = json.loads((ran_on_dask / INSTANCE_MANIFEST).read_text())
        assert manifest["params"] == instance.params
        # one process per instance, started by the Dask worker: not a Dask worker process itself
        assert manifest["pid"] not in worker_pids


def test_dask_executor_needs_an_address():
    with pytest.raises(ValueError, match="scheduler-address"):
        make_executor("dask")
    with pytest.raises(ValueError, match="--workers is for --executor local"):
        make_executor("dask", workers=2, scheduler_address="tcp://127.0.0.1:1")
