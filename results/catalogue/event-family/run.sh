#!/bin/sh
# The engine prototype's fixed-pair tables (SVT6, "X shape", seeds 0-95, the catalogue bench's sizes): a checkout of
# COMMIT with prototype.patch applied, in a git worktree, one variant per environment setting. About 6 min on one
# core. The last two tables apply the same patch to WIDTH, the commit whose vote counts every answer where the
# strongest prefix holds half of them (../vote-width/). Run from the repository root:
#   COMMIT=404b4dd WIDTH=5c8877d sh results/catalogue/event-family/run.sh
set -eu
COMMIT=${COMMIT:-404b4dd}
WIDTH=${WIDTH:-5c8877d}
HERE=$(pwd)/results/catalogue/event-family
WT=$(mktemp -d)/wt
git worktree add -q "$WT" "$COMMIT"
(cd "$WT" && git apply "$HERE/prototype.patch")
PYTHON=$(pwd)/.venv/bin/python
probe() {  # $1: output file, $2: the FAMILY_* settings, the rest: extra arguments of the probe
    out=$1 settings=$2
    shift 2
    (cd "$WT" && env PYTHONPATH="$WT" OMP_NUM_THREADS=1 $settings "$PYTHON" scripts/catalogue_fixed_pair.py \
        --algorithm SVT6 --pair "X shape" --seeds 0-95 --samples 52915 --train-fraction 0.4 "$@" > "$HERE/$out")
}
probe svt6-k1.md "FAMILY_K=1"
probe svt6-tail.md "FAMILY_K=2 FAMILY_MODE=tail FAMILY_NOISE=0.25"
probe svt6-all3.md "FAMILY_K=3 FAMILY_MODE=all"
probe svt6-k1-dense.md "FAMILY_K=1" --offer sign-vote-dense
probe svt6-all3-dense.md "FAMILY_K=3 FAMILY_MODE=all" --offer sign-vote-dense
probe svt6-stats3.md "FAMILY_K=3 FAMILY_SCOPE=stats"
probe svt6-stats3-dense.md "FAMILY_K=3 FAMILY_SCOPE=stats" --offer sign-vote-dense
git worktree remove --force "$WT"
git worktree add -q "$WT" "$WIDTH"
(cd "$WT" && git apply "$HERE/prototype.patch")
probe svt6-width-k1.md "FAMILY_K=1"
probe svt6-width-all3.md "FAMILY_K=3 FAMILY_MODE=all"
git worktree remove --force "$WT"
