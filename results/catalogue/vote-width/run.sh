#!/bin/sh
# Regenerates results/catalogue/vote-width/ from the repository root after scripts/setup.sh, at the commit whose vote
# of the strongest columns counts every two-valued column where the strongest prefix holds at least half of them
# (audit.statistics.vote_width), beside its parent (about 1.5 h on the two cores, most of it the LDP bench's 615
# cells).
set -e
OUT=$PWD/results/catalogue/vote-width
PY=$PWD/.venv/bin/python
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
COMMIT=${COMMIT:?the commit that adds vote_width}
NEW=/tmp/vote-width-new; OLD=/tmp/vote-width-old
git worktree add -f $NEW $COMMIT && git worktree add -f $OLD $COMMIT~1
fixed_pair() {  # fixed_pair ROOT SUFFIX: SVT6 and SVT34Parallel at their best pairs, RAPPOR at its first (bench sizes)
  root=$1; suffix=$2
  for spec in "SVT6|X shape|0-95|52915|0.4" "SVT34Parallel|half half|0-31|52915|0.4" "RAPPOR|one above|0-31|80000|0.25"; do
    alg=${spec%%|*}; rest=${spec#*|}; pair=${rest%%|*}; rest=${rest#*|}
    seeds=${rest%%|*}; rest=${rest#*|}; samples=${rest%%|*}; fraction=${rest#*|}
    args="--algorithm $alg --pair \"$pair\" --seeds $seeds --samples $samples --train-fraction $fraction"
    { echo "Command: \`python scripts/catalogue_fixed_pair.py $args\` (under a minute)"; echo
      eval "(cd $root && PYTHONPATH=$root $PY scripts/catalogue_fixed_pair.py $args)"; } > $OUT/$alg-$suffix.md
  done
}
PARTS=/tmp/vote-width-ldp
mkdir -p $PARTS
part() {
  name=$1; shift
  (cd $NEW && PYTHONPATH=$NEW $PY -m pgc.cli bench ldp "$@" --samples 1000000 --out $PARTS/$name.json > $PARTS/$name.log)
}
# one core: pure-ldp's Python-loop protocols, then CMS; the other: the fixed pairs and the catalogue, then the rest
(part pure-ldp --libraries pure-ldp --protocols DE SUE OUE BLH OLH FLH SHE THE RAPPOR HR HM &&
  part pure-ldp-cms --libraries pure-ldp --protocols CMS) & first=$!
fixed_pair $OLD before
fixed_pair $NEW after
cp results/catalogue/catalogue.json results/catalogue/catalogue.md $OUT/  # the file the bench replaces
for f in catalogue.json catalogue.md; do mv $OUT/$f $OUT/${f%.*}-before.${f#*.}; done
(cd $NEW && PYTHONPATH=$NEW $PY -m pgc.cli bench catalogue --total 100000 --seeds 0 1 2 --out $OUT/catalogue.json)
mv $OUT/catalogue.json $OUT/catalogue.md $OUT/..
part reference --libraries reference
part multi-freq-ldpy --libraries multi-freq-ldpy
part pure-ldp-sr-pcs --libraries pure-ldp --protocols SR PCS
part pure-ldp-hcms --libraries pure-ldp --protocols HCMS
(cd $NEW && PYTHONPATH=$NEW $PY -m audit.power.study --out /tmp/vote-width-power --only false-alarms detectability \
  > $PARTS/power.log)
wait $first
{ echo "# The LDP bench with the vote's width rule, beside results/ldp/engine-check/bench.json"
  echo; echo "Each part: \`python scripts/compare_ldp_bench.py results/ldp/engine-check/bench.json PART.json --tolerance 0.02\` (made by \`run.sh\`, 10⁶ per side, every cell from its own seed)."
  for name in reference multi-freq-ldpy pure-ldp pure-ldp-sr-pcs pure-ldp-hcms pure-ldp-cms; do
    echo; echo "## $name"; echo
    $PY scripts/compare_ldp_bench.py results/ldp/engine-check/bench.json $PARTS/$name.json --tolerance 0.02 |
      grep -v '^first:\|^second:\|only in the first'
  done; } > $OUT/ldp.md
git worktree remove --force $NEW; git worktree remove --force $OLD
