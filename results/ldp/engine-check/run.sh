#!/bin/sh
# Regenerates results/ldp/engine-check/ from the repository root after scripts/setup.sh: the whole bench (615 cells at
# 1e6 per side) in parts on the two cores, then the 72 timing audits at 1e5 per side on the idle machine.
set -e
PGC=.venv/bin/pgc
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
OUT=/tmp/ldp-rerun2
mkdir -p $OUT/parts $OUT/untimed
part() {
  name=$1; shift
  nice -n 10 $PGC bench ldp "$@" --samples 1000000 --timing-samples 100000 --out $OUT/parts/$name.json \
    > $OUT/parts/$name.log
}
# pure-ldp's clients are Python loops: its first eleven protocols on one core, everything else on the other
part pure-ldp --libraries pure-ldp --protocols DE SUE OUE BLH OLH FLH SHE THE RAPPOR HR HM & first=$!
(part reference --libraries reference && part multi-freq-ldpy --libraries multi-freq-ldpy &&
  part pure-ldp-sr-pcs --libraries pure-ldp --protocols SR PCS && part pure-ldp-hcms --libraries pure-ldp --protocols HCMS) & second=$!
wait $first
part pure-ldp-cms --libraries pure-ldp --protocols CMS
wait $second
# each part also timed its own protocols while the other part ran: those timings are dropped, and the merge times
# all 72 library audits one after the other on the idle machine
for f in $OUT/parts/*.json; do
  .venv/bin/python -c "import json, sys; d = json.load(open(sys.argv[1])); d['timing'] = []; json.dump(d, open(sys.argv[2], 'w'))" \
    "$f" "$OUT/untimed/$(basename "$f")"
done
$PGC bench ldp --samples 1000000 --timing-samples 100000 --out $OUT/bench.json --merge $OUT/untimed/*.json > $OUT/bench.log
