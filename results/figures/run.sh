#!/bin/sh
# Regenerates results/figures/ from the repository root after scripts/setup.sh (about 15 s): one PNG of every
# figure kind the reports draw, copied from the committed reports (results/report/ made by
# `pgc pipeline --out runs/pipeline --force`, results/thesis/report/ by results/thesis/run.sh, results/flower/report/
# by results/flower/run.sh) and from a report over the other result kinds (tuning, replication, federated-bandit
# regret: its JSON alone, without the PNG written beside it, so that the report draws the curves itself).
set -e
PGC=.venv/bin/pgc
OUT=results/figures
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -f $OUT/*.png
for f in results/report/figures/*.png; do cp "$f" "$OUT/main-$(basename "$f")"; done
for f in results/thesis/report/figures/*.png; do cp "$f" "$OUT/thesis-$(basename "$f")"; done
for f in results/flower/report/figures/*.png; do cp "$f" "$OUT/flower-$(basename "$f")"; done
cp results/fedlinucb/regret.json "$TMP/regret.json"
$PGC report results/tune/tune.json results/replicate/sampled/replicate.json "$TMP/regret.json" --out "$TMP/other"
for f in "$TMP"/other/figures/*.png; do cp "$f" "$OUT/other-$(basename "$f")"; done
