#!/bin/sh
# Regenerates results/catalogue/threshold-rules/ from the repository root after scripts/setup.sh: the threshold rules
# of a continuous statistic as landed at COMMIT (base) and six variants (the *.patch files, each applied to COMMIT),
# each measured three ways: rules_study.py outside the engine, the catalogue's fixed-pair audits of five algorithms
# (48 seeds each) and the quick start's audit of a training run over 12 seeds (its score×3 row: a steep ratio's deep
# tail). Two variants at a time, one per core; about 13 min on the two cores.
set -e
OUT=$PWD/results/catalogue/threshold-rules
PY=$PWD/.venv/bin/python
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
COMMIT=${COMMIT:?the commit whose threshold rules are the base}
RUN=/tmp/threshold-rules-run
rm -rf $RUN && mkdir -p $RUN
(cd $RUN && $PY -m pgc.cli train --mechanism laplace --epsilon 1 --submissions 3000 --trials 2 --seed 0 \
  --out train > /dev/null 2>&1)
measure() {  # measure NAME [PATCH]: NAME.md
  tree=/tmp/threshold-rules-$1
  git worktree add -f $tree $COMMIT > /dev/null 2>&1
  if [ -n "$2" ]; then git -C $tree apply $OUT/$2; fi
  {
    echo "# $1${2:+ ($2)}"; echo
    echo "## Outside the engine (\`rules_study.py --seeds 40\`)"; echo
    PYTHONPATH=$tree $PY $OUT/rules_study.py --seeds 40
    for spec in "ReportNoisyMax3|all above" "ReportNoisyMax4|all below" "LaplaceMechanism|one above" \
        "SVT6|X shape" "SVT34Parallel|half half"; do
      alg=${spec%%|*}; pair=${spec#*|}
      echo; echo "## $alg at \"$pair\" (\`scripts/catalogue_fixed_pair.py --seeds 0-47 --samples 52915 --train-fraction 0.4\`)"; echo
      (cd $tree && PYTHONPATH=$tree $PY scripts/catalogue_fixed_pair.py --algorithm $alg --pair "$pair" --seeds 0-47 \
        --samples 52915 --train-fraction 0.4 | tail -n +2)
    done
    echo; echo "## The quick start's score×3 row (\`pgc audit run RUN --pairs 5:15 --samples 20000 --mechanism-samples 100000 --seed S\`)"; echo
    echo "| seed | ε_LB |"; echo "|---|---|"
    for s in 0 1 2 3 4 5 6 7 8 9 10 11; do
      (cd $RUN && PYTHONPATH=$tree $PY -m pgc.cli audit run train --pairs 5:15 --samples 20000 \
        --mechanism-samples 100000 --seed $s --out $RUN/$1-$s.json --force --no-progress > /dev/null 2>&1)
    done
    $PY $OUT/quick_rows.py $RUN $1
  } > $OUT/$1.md
  git worktree remove --force $tree
}
(measure base && measure B-lower-for-central B-lower-for-central.patch &&
  measure D-three-rules-held-out D-three-rules-held-out.patch && measure F-vouched-central F-vouched-central.patch) &
first=$!
measure A-lower-everywhere A-lower-everywhere.patch
measure C-lower-where-noisy C-lower-where-noisy.patch
measure E-rules-at-median-rates E-rules-at-median-rates.patch
wait $first
$PY $OUT/summary.py $OUT > $OUT/table.md
