#!/usr/bin/env bash
# The committed audits of the federated bandit systems (from the repository root, venv active).
set -euo pipefail
out=results/fedlinucb/audit
pgc audit system pgc.fedlinucb.systems:dp20_system --pair a-toy-first-user --samples 5000 --force --out $out/dp20-toy.json | tee $out/dp20-toy.txt
pgc audit system pgc.fedlinucb.systems:dp20_system --pair b-first-user --samples 20000 --force --out $out/dp20-b-first-user.json | tee $out/dp20-b-first-user.txt
for pair in a-toy-first-user a-first-user-swap a-mid-user-reward b-first-user b-steering-user; do
  pgc audit system pgc.fedlinucb.systems:private_fedlinucb_system --pair $pair --samples 100000 --force --out $out/private-$pair.json | tee $out/private-$pair.txt
done
pgc audit system pgc.fedlinucb.systems:private_fedlinucb_system --pair a-mid-user-reward --adversarial --samples 50000 --force --out $out/private-a-mid-user-reward-adversarial.json | tee $out/private-a-mid-user-reward-adversarial.txt
