# Sourced by run.sh and rest.sh from the repository root: one part of the LDP bench at 10⁶ releases per side
# (`part NAME OPTIONS…` → $OUT/NAME.json and .log, at low priority), and each named part compared with the full run
# ../engine-check/bench.json (`compare NAME…`, to standard output).
PGC=.venv/bin/pgc
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
OUT=results/ldp/final-engine
part() {
  name=$1; shift
  nice -n 10 $PGC bench ldp "$@" --samples 1000000 --timing-samples 100000 --out $OUT/$name.json > $OUT/$name.log
}
compare() {
  for p in "$@"; do
    echo "## $p"
    .venv/bin/python scripts/compare_ldp_bench.py results/ldp/engine-check/bench.json $OUT/$p.json --tolerance 0.02
  done
}
