#!/bin/sh
# Regenerates results/catalogue/dense-sign-vote/ from the repository root after scripts/setup.sh (about 1.5 h on the
# two cores, most of it the LDP bench's 615 cells with the dense vote among the defaults).
set -e
OUT=$PWD/results/catalogue/dense-sign-vote
PY=$PWD/.venv/bin/python
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
fixed_pair() {  # fixed_pair ROOT SUFFIX [OPTIONS]: both algorithms at their best pair, seeds 0-15
  root=$1; suffix=$2; shift 2
  for spec in "SVT6|X shape" "SVT34Parallel|half half"; do
    alg=${spec%%|*}; pair=${spec#*|}
    args="--algorithm $alg --pair \"$pair\" --seeds 0-15 --samples 52915 --train-fraction 0.4${*:+ $*}"
    { echo "Command: \`python scripts/catalogue_fixed_pair.py $args\` (about 2 min)"; echo
      eval "(cd $root && $PY scripts/catalogue_fixed_pair.py $args)"; } > $OUT/$alg-$suffix.md
  done
}
# 1. the audit's own statistics, and the system offering the dense vote
fixed_pair $PWD base
fixed_pair $PWD offered --offer sign-vote-dense
# 2. the dense vote among the defaults (as-default.patch on this folder's commit, in a worktree)
WT=/tmp/dense-vote-default
git worktree add -f $WT HEAD && (cd $WT && git apply $OUT/as-default.patch)
export PYTHONPATH=$WT
fixed_pair $WT as-default
(cd $WT && $PY -m pgc.cli bench catalogue --algorithms SVT6 SVT34Parallel ReportNoisyMax3 SVT3 SVT4 \
  --total 100000 --seeds 0 1 2 --out $OUT/catalogue-as-default.json)
PARTS=/tmp/dense-vote-ldp
mkdir -p $PARTS
part() {
  name=$1; shift
  (cd $WT && $PY -m pgc.cli bench ldp "$@" --samples 1000000 --out $PARTS/$name.json > $PARTS/$name.log)
}
part pure-ldp --libraries pure-ldp --protocols DE SUE OUE BLH OLH FLH SHE THE RAPPOR HR HM & first=$!
(part reference --libraries reference && part multi-freq-ldpy --libraries multi-freq-ldpy &&
  part pure-ldp-sr-pcs --libraries pure-ldp --protocols SR PCS && part pure-ldp-hcms --libraries pure-ldp --protocols HCMS) &
second=$!
wait $first
part pure-ldp-cms --libraries pure-ldp --protocols CMS
wait $second
compared() {  # compared TITLE NAME=FILE...: each part beside results/ldp/engine-check/bench.json, one file
  echo "# $1, beside results/ldp/engine-check/bench.json"; shift
  echo; echo "Each part: \`python scripts/compare_ldp_bench.py results/ldp/engine-check/bench.json PART.json --tolerance 0.02\` (made by \`run.sh\`, 10⁶ per side, every cell from its own seed)."
  for spec in "$@"; do
    echo; echo "## ${spec%%=*}"; echo
    $PY scripts/compare_ldp_bench.py results/ldp/engine-check/bench.json ${spec#*=} --tolerance 0.02 |
      grep -v '^first:\|^second:\|only in the first'
  done
}
compared "The LDP bench with the dense vote among the defaults" $(for name in reference multi-freq-ldpy pure-ldp \
  pure-ldp-sr-pcs pure-ldp-hcms pure-ldp-cms; do echo $name=$PARTS/$name.json; done) > $OUT/ldp-as-default.md
# 3. both dense sums ranked held out (held-out.patch on top)
(cd $WT && git apply $OUT/held-out.patch)
fixed_pair $WT held-out
# 4. the dense vote among the defaults at a 10 % selection margin (margin.patch on as-default.patch)
(cd $WT && git checkout -q -- . && git apply $OUT/as-default.patch $OUT/margin.patch)
fixed_pair $WT margin
(cd $WT && $PY -m pgc.cli bench ldp --libraries reference --protocols CMS HM --samples 1000000 \
  --out $OUT/ldp-margin.json)
compared "Reference CMS and HM with the dense vote among the defaults at a 10 % selection margin" \
  reference=$OUT/ldp-margin.json > $OUT/ldp-margin.md
git worktree remove --force $WT
