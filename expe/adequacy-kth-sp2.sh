#!/bin/sh
# The adequacy measure P of Baranov et al. 2018 (Sect. VII, eq. 2; Table I) for three rigid replays of the
# KTH-SP2 log against the log itself: FCFS, EASY and conservative backfilling on the recorded machine (100 nodes),
# walltimes = the log's requested times (batreplay run's default), so each run keeps the log's job stream
# (submission times, processors and requested times), as P requires.
#
# Run from the repository: sh expe/adequacy-kth-sp2.sh (under a minute on 2 cores). The runs and the whole
# analysis go to runs/adequacy-kth-sp2/ (not committed); the tables and the page are copied to
# expe/results/adequacy-kth-sp2/ (committed; its README.md is written by hand and left alone).
set -eu
LOG=../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz
RUNS=runs/adequacy-kth-sp2
RESULTS=expe/results/adequacy-kth-sp2

for scheduler in easy fcfs conservative; do
    uv run batreplay run --workload "$LOG" --platform kth-sp2 --scheduler "$scheduler" \
        --out "$RUNS/$scheduler" --force --quiet
done
rm -rf "$RUNS/analysis"
uv run batreplay analyze "$RUNS/easy" "$RUNS/fcfs" "$RUNS/conservative" --names easy fcfs conservative \
    --swf "$LOG" --out "$RUNS/analysis"
mkdir -p "$RESULTS"
for file in adequacy_vs_log.csv adequacy_pairs.csv metrics.csv report.html; do
    cp "$RUNS/analysis/$file" "$RESULTS/$file"
done
sha256sum "$RUNS/easy/out_jobs.csv" "$RUNS/fcfs/out_jobs.csv" "$RUNS/conservative/out_jobs.csv"
