#!/bin/sh
# Regenerates results/flower/ from the repository root after scripts/setup.sh (about 20 min on 2 cores).
set -e
PGC=.venv/bin/pgc
# the example ClientApp (softmax regression on digits, LocalDpMod at (1, 1e-5)), both named pairs
$PGC audit flower examples/flower/digits_app.py:app --pair "one record replaced" --samples 100000 --force --out results/flower/digits-replaced.json
$PGC audit flower examples/flower/digits_app.py:app --pair "one record removed" --samples 100000 --force --out results/flower/digits-removed.json
# LocalDpMod alone on crafted updates (±C·e1): correct, and with sensitivity set to the clipping norm
$PGC audit system flower-localdp --samples 100000 --force --out results/flower/localdp-update-level.json
$PGC audit system flower-localdp-sensitivity-c --samples 20000 --force --out results/flower/localdp-sensitivity-c.json
# the adapter against the numpy reference of the same mod, tightness against the oracle, 20 false-alarm seeds
$PGC bench flower --samples 100000 --seeds 20 --seed-samples 5000 --tightness-seeds 20 --out results/flower/bench.json
# one federated training run with 1,000 canary clients on Flower's simulation engine (Ray), both DP modes
$PGC audit flower-one-run local-dp --canaries 1000 --real-clients 20 --rounds 2 --epsilon 1 --delta 1e-5 --force --out results/flower/one-run-local-dp.json
$PGC audit flower-one-run central-dp --canaries 1000 --real-clients 20 --rounds 2 --noise-multiplier 1 --delta 1e-5 --force --out results/flower/one-run-central-dp.json
# a ClientApp that trains with Opacus (DP-SGD inside fit, no mod), one record removed, under Opacus's own claim
$PGC audit flower examples/flower/opacus_app.py:app --samples 20000 --seed 0 --force --out results/flower/opacus-app.json
# the report over the Flower audits
$PGC report results/flower/digits-replaced.json results/flower/digits-removed.json results/flower/localdp-update-level.json results/flower/localdp-sensitivity-c.json --force --out results/flower/report --title "Flower client audits"
