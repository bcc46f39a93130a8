#!/usr/bin/env bash
# The one-run audit results of this folder, from the repository root (runs/ holds the run folders).
set -euo pipefail
PGC="${PGC:-python -m pgc.cli}"
R=results/audit/one-run
THETA=$R/crafted_theta_5_15.npy  # pgc.a3c.crafted's gradient-objective θ for 5 vs 15 (pgc train's search, seed 0)
# crafted canaries, Laplace ε = 1, M = 10,000; then the same with all protections on
$PGC train --submissions 1000 --canaries 10000 --canary-pair 5:15 --canary-model crafted --canary-theta $THETA \
  --out runs/onerun-crafted --force --no-progress
$PGC audit one-run runs/onerun-crafted --force --out $R/crafted-5-15.json --no-progress
$PGC train --submissions 1000 --canaries 10000 --canary-pair 5:15 --canary-model crafted --canary-theta $THETA \
  --protect all --out runs/onerun-crafted-protected --force --no-progress
$PGC audit one-run runs/onerun-crafted-protected --force --out $R/crafted-5-15-protect-all.json --no-progress
# live canaries: spread over a 10,000-submission run, and after 10,000 regular agents of a 20,000 one
for pair in 9.7:9.9 5:15; do
  tag=${pair/:/-}
  $PGC train --submissions 10000 --canaries 10000 --canary-pair $pair --canary-model live \
    --out runs/onerun-live-$tag --force --no-progress
  $PGC audit one-run runs/onerun-live-$tag --force --out $R/live-$tag.json --no-progress
  $PGC train --submissions 20000 --canary-start 10000 --canaries 10000 --canary-pair $pair --canary-model live \
    --out runs/onerun-live-trained-$tag --force --no-progress
  $PGC audit one-run runs/onerun-live-trained-$tag --force --out $R/live-trained-$tag.json --no-progress
done
# the planted twin bug (noise drawn for 8ε in the compiled loop only), crafted canaries, M = 10,000
$PGC train --submissions 1000 --canaries 10000 --canary-pair 5:15 --canary-model crafted --canary-theta $THETA \
  --config configs/planted-twin-bug.json --out runs/onerun-planted --force --no-progress
$PGC audit one-run runs/onerun-planted --force --out $R/planted-bug-8x.json --no-progress
# cost: one run with canaries against the multi-sample audit at the same θ
$PGC bench one-run --out $R/bench.json > $R/bench.txt
