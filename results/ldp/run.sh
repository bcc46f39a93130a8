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
mkdir -p results/ldp/parts
part() {
  name=$1; shift
  nice -n 10 $PGC bench ldp "$@" --samples 1000000 --timing-samples 100000 \
    --out results/ldp/parts/$name.json > results/ldp/parts/$name.log
}
part pure-ldp --libraries pure-ldp --protocols DE SUE OUE BLH OLH FLH SHE THE RAPPOR HR HM CMS HCMS & pure=$!
(part reference --libraries reference && part multi-freq-ldpy --libraries multi-freq-ldpy &&
  part pure-ldp-sr-pcs --libraries pure-ldp --protocols SR PCS) & other=$!
wait $pure
wait $other
$PGC bench ldp --samples 1000000 --timing-samples 100000 --out results/ldp/bench.json \
  --merge results/ldp/parts/reference.json results/ldp/parts/multi-freq-ldpy.json results/ldp/parts/pure-ldp.json \
  results/ldp/parts/pure-ldp-sr-pcs.json \
  > results/ldp/bench.log
# single audits through pgc audit ldp, 1e5 per side (the library record and the verdict in each result)
$PGC audit ldp multi-freq-ldpy:OLH --setting k=25 --setting epsilon=1 --samples 100000 --out results/ldp/mfl-olh.json --force
$PGC audit ldp multi-freq-ldpy:OLH --setting k=25 --setting epsilon=1 --setting decoders=false --samples 100000 --out results/ldp/mfl-olh-raw-columns.json --force
$PGC audit ldp multi-freq-ldpy:SS --setting k=25 --setting epsilon=1 --samples 100000 --out results/ldp/mfl-ss.json --force
$PGC audit ldp pure-ldp:RAPPOR --setting k=25 --setting epsilon=1 --samples 100000 --out results/ldp/pure-ldp-rappor.json --force
$PGC audit ldp pure-ldp:OLH --setting k=25 --setting epsilon=1 --samples 100000 --out results/ldp/pure-ldp-olh.json --force
$PGC audit ldp reference:SS --setting k=25 --setting epsilon=1 --samples 100000 --out results/ldp/reference-ss.json --force
# the report: its library section (library, version, protocol, parameters, claim, certified ε, verdict, why) and the bench
$PGC report results/ldp/mfl-olh.json results/ldp/mfl-olh-raw-columns.json results/ldp/mfl-ss.json results/ldp/pure-ldp-rappor.json results/ldp/pure-ldp-olh.json results/ldp/reference-ss.json results/ldp/bench.json --out results/ldp/report --title "LDP frequency-oracle libraries" --force
