#!/usr/bin/env bash
# The committed system audits, in order (from the repository root, with the project's venv active).
set -euo pipefail
out=results/audit/systems
pgc audit system pgc.gympg.system:pendulum_system --samples 100000 --force --out $out/pendulum-honest.json | tee $out/pendulum-honest.txt
pgc audit system pgc.gympg.system:pendulum_system --adversarial --samples 100000 --force --out $out/pendulum-adversarial.json | tee $out/pendulum-adversarial.txt
pgc audit system pgc.a3c.system:pgc_a3c_system --pair "wide 5 vs 15" --adversarial --samples 200000 --force --out $out/pgc-a3c-laplace-adversarial.json | tee $out/pgc-a3c-laplace-adversarial.txt
pgc audit system pgc.a3c.system:pgc_a3c_gaussian_system --pair "wide 5 vs 15" --adversarial --samples 200000 --force --out $out/pgc-a3c-gaussian-adversarial.json | tee $out/pgc-a3c-gaussian-adversarial.txt
pgc bench systems --out $out/bench.json | tee $out/bench.txt
