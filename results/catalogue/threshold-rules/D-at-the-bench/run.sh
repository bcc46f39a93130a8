#!/bin/sh
# Regenerates results/catalogue/threshold-rules/D-at-the-bench/ from the repository root after scripts/setup.sh:
# variant D (../D-three-rules-held-out.patch applied to COMMIT, the base) through the catalogue bench at 10⁵ per side
# and the Laplace mechanism at ε = 0.1 over 40 seeds (about 12 min, one core).
set -e
OUT=$PWD/results/catalogue/threshold-rules/D-at-the-bench
PY=$PWD/.venv/bin/python
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
COMMIT=${COMMIT:?the base commit}
WT=/tmp/threshold-rules-D
git worktree add -f $WT $COMMIT
git -C $WT apply $OUT/../D-three-rules-held-out.patch
(cd $WT && PYTHONPATH=$WT $PY -m pgc.cli bench catalogue --total 100000 --seeds 0 1 2 --out $OUT/catalogue.json)
(cd $WT && PYTHONPATH=$WT $PY scripts/laplace_small_epsilon.py --seeds $(seq 0 39) --out $OUT/laplace-eps0.1.json)
git worktree remove --force $WT
