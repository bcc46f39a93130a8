#!/bin/sh
# Re-runs the LDP bench (10⁶ releases per side per cell) on the engine of the commit that adds this folder, in parts
# on the two cores, and compares every finished cell with ../engine-check/bench.json. The committed parts were
# written by these commands (to /tmp/ldp-final/parts/, their `command` fields) from a checkout of that commit, beside
# other work, and stopped before they finished: pure-ldp's first part after 162 of its 165 cells, SR and
# PCS after 23 of 30, HCMS not started. Their wall times and timing audits ran under contention and are not
# comparable.
set -e
PGC=.venv/bin/pgc
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
OUT=results/ldp/final-engine
part() {
  name=$1; shift
  nice -n 10 $PGC bench ldp "$@" --samples 1000000 --timing-samples 100000 --out $OUT/$name.json > $OUT/$name.log
}
part pure-ldp --libraries pure-ldp --protocols DE SUE OUE BLH OLH FLH SHE THE RAPPOR HR HM & first=$!
(part reference --libraries reference && part multi-freq-ldpy --libraries multi-freq-ldpy &&
  part pure-ldp-sr-pcs --libraries pure-ldp --protocols SR PCS && part pure-ldp-hcms --libraries pure-ldp --protocols HCMS) & second=$!
part pure-ldp-cms --libraries pure-ldp --protocols CMS
wait $first
wait $second
for p in reference multi-freq-ldpy pure-ldp pure-ldp-sr-pcs pure-ldp-cms pure-ldp-hcms; do
  echo "## $p"
  .venv/bin/python scripts/compare_ldp_bench.py results/ldp/engine-check/bench.json $OUT/$p.json --tolerance 0.02
done > $OUT/compare.md
