"""The adequacy measure P of each rigid run of ``expe/user-models.toml`` against its log, beside its reference P_ideal.

For each rigid setting (log, scheduler, platform) of the campaign, ``batreplay analyze`` is given the rigid run and
the two runs of ``expe/user-models-reference.toml`` that repeat it with random job overheads of seeds 1 and 2
(Baranov et al. 2018, section VIII): P of the rigid run against the log (the log's requested times for both
streams, as the campaign raises walltimes to twice the run time), and P_ideal, P between the two repetitions, on the
first 1,000 jobs and on all of them. Writes ``expe/results/user-models/adequacy.csv``; the analyses go to
``runs/campaigns/user-models-adequacy/`` (not committed). Run after both campaigns (``sh expe/user-models.sh``):

    uv run python expe/user_models_adequacy.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from batreplay.analysis.analyze_command import analyze
from batreplay.campaign.spec import CampaignSpec, Instance, load_campaign

EXPE = Path(__file__).resolve().parent
RESULT = EXPE / "results" / "user-models" / "adequacy.csv"


def _repetitions(rigid: Instance, reference: list[Instance]) -> list[Instance]:
    """The instances of the reference campaign that repeat ``rigid``: same log (with ``-o1``, ``-o2``), scheduler
    and platform."""
    return [other for other in reference
            if other.log.name in (f"{rigid.log.name}-o1", f"{rigid.log.name}-o2")
            and other.experiment.scheduler == rigid.experiment.scheduler
            and other.experiment.variant.label == rigid.experiment.variant.label]


def _row(rigid: Instance, spec: CampaignSpec, reference_root: Path, repetitions: list[Instance], out: Path) -> dict:
    """One row of the table: the setting, P against the log and P_ideal (s) on the first 1,000 and all jobs."""
    runs = [spec.output_root / rigid.id, *(reference_root / other.id for other in repetitions)]
    analyze(runs, out, swf_log=spec.resolve(rigid.log.workload), adequacy_requested_times="log",
            names=["rigid", *(other.log.name for other in repetitions)])
    against_log = pd.read_csv(out / "adequacy_vs_log.csv", dtype={"prefix": str}).query("run == 'rigid'")
    ideal = pd.read_csv(out / "adequacy_reference.csv", dtype={"prefix": str})
    row = {"log": rigid.log.name, "scheduler": rigid.experiment.scheduler,
           "platform": rigid.experiment.variant.label}
    for prefix, suffix in (("1000", "first_1000"), ("all", "all")):
        log_row = against_log.set_index("prefix").loc[prefix]
        ideal_row = ideal.set_index("prefix").loc[prefix]
        row[f"p_vs_log_{suffix}_s"] = float(log_row["measure"])
        row[f"p_ideal_{suffix}_s"] = float(ideal_row["p_ideal"])
        row[f"jobs_waiting_otherwise_vs_log_{suffix}"] = int(log_row["nb_different_jobs"])
        row[f"jobs_waiting_otherwise_ideal_{suffix}"] = int(ideal_row["nb_different_jobs_ideal"])
    row["nb_jobs"] = int(against_log.set_index("prefix").loc["all", "nb_jobs"])
    return row


def main() -> None:
    """Analyse every rigid setting and write :data:`RESULT`."""
    spec = load_campaign(EXPE / "user-models.toml")
    reference = load_campaign(EXPE / "user-models-reference.toml")
    repeats = reference.instances()
    rows = []
    for rigid in (instance for instance in spec.instances() if instance.replay.model == "rigid"):
        repetitions = _repetitions(rigid, repeats)
        if len(repetitions) != 2:
            raise SystemExit(f"{rigid.id}: expected 2 repetitions in {reference.path}, found {len(repetitions)}")
        out = spec.output_root.parent / "user-models-adequacy" / rigid.id
        rows.append(_row(rigid, spec, reference.output_root, repetitions, out))
        print(f"{rigid.id}: P = {rows[-1]['p_vs_log_all_s']:.0f} s, P_ideal = {rows[-1]['p_ideal_all_s']:.0f} s")
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(RESULT, index=False)
    print(f"wrote {RESULT}")


if __name__ == "__main__":
    main()
