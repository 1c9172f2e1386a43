#!/usr/bin/env bash
# Checksums of out_jobs.csv for the runs a behaviour-preserving change must leave identical (issue 11's acceptance):
# EASY, FCFS and conservative on the whole KTH-SP2, SDSC-SP2 and HPC2N logs, and EASY with feedback a60 on KTH-SP2.
# Usage (from the repository root): bash benchmarks/acceptance_checksums.sh OUT_FOLDER
# Prints one line per run: "<sha256>  <run>"; run it before and after the change and diff the outputs.
set -euo pipefail
out=${1:?usage: acceptance_checksums.sh OUT_FOLDER}
logs=${WORKLOADS:-../shared/workloads}
mkdir -p "$out"
uv run batreplay platform --nodes 240 --speed 1e9 --out "$out/hpc2n.xml" >/dev/null
run() {  # name workload platform scheduler [extra args]
    local name=$1 workload=$2 platform=$3 scheduler=$4; shift 4
    uv run batreplay run --quiet --force --workload "$logs/$workload" --platform "$platform" --scheduler "$scheduler" \
        --out "$out/$name" "$@" >"$out/$name.log" 2>&1 || { echo "FAILED $name (see $out/$name.log)"; return 1; }
    echo "$(sha256sum < "$out/$name/out_jobs.csv" | cut -c1-64)  $name"
}
for s in easy fcfs conservative; do
    run "kth-$s" KTH-SP2-1996-2.1-cln.swf.gz kth-sp2 "$s"
    run "sdsc-$s" SDSC-SP2-1998-4.2-cln.swf.gz sdsc-sp2 "$s"
    run "hpc2n-$s" HPC2N-2002-2.2-cln.swf.gz "$out/hpc2n.xml" "$s"
done
run kth-easy-a60 KTH-SP2-1996-2.1-cln.swf.gz kth-sp2 easy --replay feedback --sessions arrival:60
