#!/bin/sh
# The GridKa site model of Caspart et al. 2019 (Sect. 5-6), from the LCG log of the Parallel Workloads Archive:
# GridKa's jobs are partitions 156 and 157 (4,408 jobs). One job type per group (virtual organisation), fitted on a
# random half (seed 1), validated on the other half as the paper does (closed workload, then open for comparison),
# then the node-selection strategies compared on the calibrated model (the same closed workload on 96 job slots of
# three node types, expe/platforms/gridka-model.toml), and the calibrated model replayed closed and open with five
# seeds of the draws each (the campaign expe/site-model-gridka.toml).
#
# Run from the repository: sh expe/site-model-gridka.sh (about a minute on 2 cores). Everything goes to
# runs/site-model-gridka/ (not committed); the tables are copied to expe/results/site-model-gridka/ (committed; its
# README.md is written by hand from them and left alone). Prints the wall time of each step.
set -eu
LOG=../shared/workloads/LCG.swf.gz
RUNS=runs/site-model-gridka
RESULTS=expe/results/site-model-gridka
rm -rf "$RUNS"
mkdir -p "$RUNS" "$RESULTS"

step() { echo "== $1: $(($(date +%s) - START)) s"; }
START=$(date +%s)
uv run batreplay model fit "$LOG" --job-types group --select partition=156,157 --split 0.5 --seed 1 \
    --out "$RUNS/gridka.json" > "$RUNS/fit.txt"
step "fit"
# validation, closed: the whole site (the held-out half is a random half of it): 48 nodes at the recorded speed (one
# job slot each) and the closed population's default, the held-out jobs' mean number in the system (23.9) over their
# share of the jobs (0.5): 48 jobs, the site full as the paper keeps it
uv run batreplay platform --nodes 48 --out "$RUNS/gridka-48.xml"
uv run batreplay model validate "$RUNS/gridka.json" --log "$LOG" --platform "$RUNS/gridka-48.xml" \
    --mode closed --seed 1 --out "$RUNS/validation-closed" > "$RUNS/validation-closed.txt"
step "validation, closed"
# validation, open: the site's jobs never waited in the log (LCG records no waits), so a platform large enough for
# their peaks (640 nodes; at most 306 held-out jobs ran at once, their runs laid from their submissions: twice that
# for the whole site)
uv run batreplay platform --nodes 640 --out "$RUNS/gridka-640.xml"
uv run batreplay model validate "$RUNS/gridka.json" --log "$LOG" --platform "$RUNS/gridka-640.xml" \
    --mode open --seed 1 --out "$RUNS/validation-open" > "$RUNS/validation-open.txt"
step "validation, open"
# node selection on the calibrated model: the closed population of the validation (48 jobs) on 96 job slots of three
# node types, EASY on job slots (with every slot busy, a job that ends frees the one slot the next takes: no choice)
uv run batreplay platform --node-types expe/platforms/gridka-model.toml --out "$RUNS/gridka-types.xml"
for strategy in lowest-id least-loaded best-fit round-robin random fastest-first; do
    uv run batreplay model validate "$RUNS/gridka.json" --log "$LOG" --platform "$RUNS/gridka-types.xml" \
        --seed 1 --compute-sharing \
        --scheduler-options "{\"slots\": true, \"node_selection\": \"$strategy\", \"seed\": 0}" \
        --out "$RUNS/node-selection-$strategy" > "$RUNS/node-selection-$strategy.txt"
    step "node selection, $strategy"
done
# the calibrated model in a campaign (expe/site-model-gridka.toml): closed and open on the 48 nodes, five seeds of the
# draws each, the first 200,000 s left out of the metrics
uv run batreplay campaign run expe/site-model-gridka.toml --workers 2 --quiet > "$RUNS/campaign.txt"
uv run batreplay campaign report expe/site-model-gridka.toml >> "$RUNS/campaign.txt"
step "campaign, closed and open, five seeds"
cp "$RUNS/fit.txt" "$RESULTS/fit.txt"
for mode in closed open; do
    cp "$RUNS/validation-$mode.txt" "$RESULTS/validation-$mode.txt"
    cp "$RUNS/validation-$mode/validation.csv" "$RESULTS/validation-$mode.csv"
    cp "$RUNS/validation-$mode/validation.json" "$RESULTS/validation-$mode.json"
    mkdir -p "$RESULTS/figures-$mode"
    cp "$RUNS/validation-$mode/figures/"*.png "$RESULTS/figures-$mode/"
done
uv run python - "$RUNS" "$RESULTS" <<'PY'
import sys
from pathlib import Path

import pandas as pd

runs, results = Path(sys.argv[1]), Path(sys.argv[2])
rows = []
for folder in sorted(p for p in runs.glob("node-selection-*") if p.is_dir()):
    table = pd.read_csv(folder / "validation.csv").set_index("measure")
    rows.append({"strategy": folder.name.removeprefix("node-selection-"),
                 **{f"{m} ({table.loc[m, 'unit']})": table.loc[m, "simulated"]
                    for m in ("throughput", "utilisation", "mean run time", "mean waiting time")},
                 "throughput deviation from the log": table.loc["throughput", "deviation"]})
pd.DataFrame(rows).to_csv(results / "node-selection.csv", index=False)
# the campaign: each instance's metrics in the steady state, from the warm-up's end (200,000 s) to the closed
# duration (948,966 s, when the closed runs stop replacing jobs and drain), then their mean and standard deviation
# over the seeds (the instances' own metrics.json run to the last finish, the drain included)
from batreplay.analysis.metrics import TimeWindow, summarize
from batreplay.formats.out_jobs import read_out_jobs

instances = pd.read_csv(runs / "campaign-report" / "instances.csv")
window = TimeWindow(200_000.0, 948_966.0)
steady = [{"replay": row.replay, "seed": row.seed,
           **summarize(read_out_jobs(runs / "campaign" / row.id / "out_jobs.csv"), nb_resources=48, window=window)}
          for row in instances.itertuples()]
columns = ["replay", "seed", "nb_jobs", "throughput_per_day", "utilisation", "mean_waiting_time", "span_start",
           "span_end"]
frame = pd.DataFrame(steady)[columns].sort_values(["replay", "seed"])
frame.to_csv(results / "campaign-seeds.csv", index=False)
spread = frame.groupby("replay")[["nb_jobs", "throughput_per_day", "utilisation", "mean_waiting_time"]]
summary = spread.agg(["mean", "std"])
summary.columns = [f"{measure} {statistic}" for measure, statistic in summary.columns]
summary.reset_index().to_csv(results / "campaign-spread.csv", index=False, float_format="%.6g")
PY
sha256sum "$RUNS"/validation-*/simulation/out_jobs.csv "$RUNS"/node-selection-*/simulation/out_jobs.csv
step "done"
