#!/bin/sh
# Case 1 of a scale leak audited, recertified against its saved witness, and the witness read back alone.
# From the repository root: sh results/audit/witness/run.sh  (about 10 s on a 2-core machine)
set -e
cd "$(dirname "$0")"
PGC=../../../.venv/bin/pgc
PY=../../../.venv/bin/python
$PGC audit system scale_leak.py:make --samples 20000 --out scale.json --force --no-progress > audit.txt
$PGC audit recertify scale.json --certification-seed 7 --out recertified.json --force --no-progress > recertify.txt
$PY read_witness.py > read_witness.txt
