#!/bin/sh
# Regenerates results/ldp/ from the repository root after scripts/setup.sh: the bench (615 cells at 1e6 per side plus
# 72 timed audits at 1e5 per side, about 2.5 h of audit time on one core) in parts, then the single audits and the report.
set -e
PGC=.venv/bin/pgc
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
# every protocol at ε ∈ {0.5, 1, 2, 4, 8}, k ∈ {2, 25, 100}: our certified ε_LB beside LDP-Auditor's method on the same
# releases and the exact ε. In parts on the two cores (pure-ldp's clients are Python loops: its thirteen first
# protocols took 84 min of audit time in the committed run, reference, multi-freq-ldpy and pure-ldp's SR and PCS
# 65 min on the other core), then the whole grid once with --merge, which keeps every finished cell, times the
# library audits and writes bench.json, .md and .png
mkdir -p /tmp/ldp-rerun/parts
part() {
  name=$1; shift
  nice -n 10 $PGC bench ldp "$@" --samples 1000000 --timing-samples 100000 \
    --out /tmp/ldp-rerun/parts/$name.json > /tmp/ldp-rerun/parts/$name.log
}
part pure-ldp --libraries pure-ldp --protocols DE SUE OUE BLH OLH FLH SHE THE RAPPOR HR HM CMS HCMS & pure=$!
(part reference --libraries reference && part multi-freq-ldpy --libraries multi-freq-ldpy &&
  part pure-ldp-sr-pcs --libraries pure-ldp --protocols SR PCS) & other=$!
wait $pure
wait $other
$PGC bench ldp --samples 1000000 --timing-samples 100000 --out /tmp/ldp-rerun/bench.json \
  --merge /tmp/ldp-rerun/parts/reference.json /tmp/ldp-rerun/parts/multi-freq-ldpy.json /tmp/ldp-rerun/parts/pure-ldp.json \
  /tmp/ldp-rerun/parts/pure-ldp-sr-pcs.json \
  > /tmp/ldp-rerun/bench.log
