#!/bin/sh
# A site model of HPC2N (Umea, 2002-2006; the Parallel Workloads Archive's cleaned log, 202,871 jobs), as Caspart
# et al. 2019 build GridKa's: one job type per group (SWF field 13), fitted on a random half of the jobs (seed 1),
# validated on the other half. HPC2N records CPU times, so each job's CPU demand is its CPU time and its I/O demand
# the rest of its run time at the reference I/O rate (1e8 bytes/s): the validation compares CPU efficiencies too.
# Jobs that read run as demand rounds, which Batsim 4.2.1 runs from workload files only: the validation is open (a
# workload drawn at the whole site's rate, of which a random half is compared), on the recorded machine (240
# processors, one host each, 1 Gflop/s) with I/O links at the reference rate.
#
# Run from the repository: sh expe/site-model-hpc2n.sh (about two minutes on 2 cores). Everything goes to
# runs/site-model-hpc2n/ (not committed); the tables and figures are copied to expe/results/site-model-hpc2n/
# (committed; its README.md is written by hand from them and left alone). Prints the wall time of each step.
set -eu
LOG=../shared/workloads/HPC2N-2002-2.2-cln.swf.gz
RUNS=runs/site-model-hpc2n
RESULTS=expe/results/site-model-hpc2n
rm -rf "$RUNS"
mkdir -p "$RUNS" "$RESULTS"

step() { echo "== $1: $(($(date +%s) - START)) s"; }
START=$(date +%s)
uv run batreplay model fit "$LOG" --job-types group --split 0.5 --seed 1 --out "$RUNS/hpc2n.json" > "$RUNS/fit.txt"
step "fit"
uv run batreplay platform --nodes 240 --io-rate 1e8 --out "$RUNS/hpc2n-240-io.xml"
uv run batreplay model validate "$RUNS/hpc2n.json" --log "$LOG" --platform "$RUNS/hpc2n-240-io.xml" \
    --mode open --seed 1 --out "$RUNS/validation-open" > "$RUNS/validation-open.txt"
step "validation, open"
cp "$RUNS/fit.txt" "$RESULTS/fit.txt"
cp "$RUNS/validation-open.txt" "$RESULTS/validation-open.txt"
cp "$RUNS/validation-open/validation.csv" "$RESULTS/validation-open.csv"
cp "$RUNS/validation-open/validation.json" "$RESULTS/validation-open.json"
mkdir -p "$RESULTS/figures-open"
cp "$RUNS/validation-open/figures/"*.png "$RESULTS/figures-open/"
sha256sum "$RUNS/validation-open/simulation/out_jobs.csv"
step "done"
