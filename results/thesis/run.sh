#!/bin/sh
# Regenerates results/thesis/ from the repository root after scripts/setup.sh: the thesis' four systems
# (dprl) audited against their own claims at 100,000 releases per side, their textbook references, the
# worst-pair searches, the growth of capped bounds with n, the attacks, and the report (about 140 min on 2 cores,
# most of it the map-recovery runs).
set -e
PGC=.venv/bin/pgc
OUT=results/thesis
A="$PGC audit --samples 100000"
# ch. 3 advising (Table 3.5: ε = 1, S = 1; experiment 3: ε in 0.1 0.4 0.7 1 2)
for e in 0.1 0.4 0.7 1 2; do
  $A --system dprl-advising --setting epsilon=$e --force --out $OUT/advising-eps$e.json
done
$A --system dprl-advising --pair "same actions as the student (line 3): one Q 2 vs 0" --force --out $OUT/advising-same-actions.json
$A --system dprl-advising --setting noise=fresh --force --out $OUT/advising-fresh-noise.json
$A --system dprl-advising --search-pair --force --out $OUT/advising-searched.json
$A --system dprl-advising --adversarial --force --out $OUT/advising-adversarial-student.json  # the student's Q chosen by CMA-ES
$A --system dprl-advising --setting reference=true --force --out $OUT/advising-reference.json
$A --system dprl-advising --setting reference=true --search-pair --force --out $OUT/advising-reference-searched.json
# ch. 4 planning (§4.8.1: ε = 0.5; Fig. 4.4(a))
$A --system dprl-planning --pair "Fig. 4.4(a) vs without (b,1)" --force --out $OUT/planning-node-b1.json
$A --system dprl-planning --pair "Fig. 4.4(a) vs without (b,5)" --force --out $OUT/planning-node-b5.json
$A --system dprl-planning --setting relation='"edge"' --force --out $OUT/planning-edge-length.json
$A --system dprl-planning --setting d_max='"data"' --force --out $OUT/planning-dmax-data.json
$A --system dprl-planning --search-pair --force --out $OUT/planning-searched.json
$A --system dprl-planning --search-pair --channels degree_histogram --force --out $OUT/planning-histogram-searched.json
$A --system dprl-planning --setting reference=true --search-pair --force --out $OUT/planning-reference-searched.json
# ch. 5 DP-DRL (N = 10; ε = 0.1, 1 and dynamic; "obfuscate" as flip and as a fresh random bit)
for e in 0.1 1 '"dynamic"'; do
  name=$(echo $e | tr -d '"')
  $A --system dprl-dpdrl --setting epsilon=$e --force --out $OUT/dpdrl-flip-eps$name.json
  $A --system dprl-dpdrl --setting epsilon=$e --setting obfuscation='"resample"' --force --out $OUT/dpdrl-resample-eps$name.json
done
$A --system dprl-dpdrl --search-pair --force --out $OUT/dpdrl-searched.json
$A --system dprl-dpdrl --setting obfuscation='"resample"' --search-pair --force --out $OUT/dpdrl-resample-searched.json
$A --system dprl-dpdrl --setting reference=true --force --out $OUT/dpdrl-reference-eps0.1.json
$PGC audit --samples 1000000 --system dprl-dpdrl --setting reference=true --force --out $OUT/dpdrl-reference-eps0.1-n1e6.json
$A --system dprl-dpdrl --setting reference=true --setting epsilon='"dynamic"' --force --out $OUT/dpdrl-reference-dynamic.json
# ch. 6 one-parameter defence (§6.5: k = 10, m = 5, ε in 0.1 0.7 1.4 2.0; claim k·ε)
for e in 0.1 0.7 1.4 2.0; do
  $A --system dprl-oneparam --setting epsilon=$e --force --out $OUT/oneparam-thesis-eps$e.json
done
$A --system dprl-oneparam --setting utility_origin='"text"' --force --out $OUT/oneparam-utility-as-text.json
$A --system dprl-oneparam --search-pair --force --out $OUT/oneparam-searched.json
$A --system dprl-oneparam --setting relation='"member"' --pair "member: confident vs typical prediction" --force --out $OUT/oneparam-member.json
$A --system dprl-oneparam --setting relation='"member"' --search-pair --force --out $OUT/oneparam-member-searched.json
$A --system dprl-oneparam --setting reference=true --setting relation='"member"' --pair "member: near-certain predictions of two different classes" --force --out $OUT/oneparam-reference-member.json
$A --system dprl-oneparam --setting reference=true --search-pair --force --out $OUT/oneparam-reference-searched.json
# where ε_LB sits at its cap: how it grows with the sample budget (finite or unbounded leak)
for n in 10000 100000 1000000; do
  $PGC audit --samples $n --system dprl-dpdrl --force --out $OUT/growth/dpdrl-flip-n$n.json
  $PGC audit --samples $n --system dprl-oneparam --force --out $OUT/growth/oneparam-thesis-n$n.json
  $PGC audit --samples $n --system dprl-planning --channels route_probabilities --force --out $OUT/growth/planning-routes-n$n.json
  $PGC audit --samples $n --system dprl-advising --pair "same actions as the student (line 3): one Q 2 vs 0" --channels teacher_q --force --out $OUT/growth/advising-same-actions-n$n.json
done
# attacks
$PGC thesis membership --force --out $OUT/membership.json
$PGC thesis map-recovery --size 7x7 --maps 20 --defences 1 0.1 dynamic --force --out $OUT/map-recovery-7x7.json
$PGC thesis map-recovery --size 12x11 --maps 8 --defences 0.1 dynamic --episodes 3000 --max-steps 300 --force --out $OUT/map-recovery-12x11.json
$PGC thesis map-recovery --size 12x11 --maps 8 --defences 0.1 dynamic --episodes 3000 --max-steps 300 --sees-cell --force --out $OUT/map-recovery-12x11-sees-cell.json
# the same 10 maps with a DQN and with the table (about 40 and 10 min)
$PGC thesis map-recovery --size 7x7 --maps 10 --defences 1 0.1 dynamic --learner dqn --force --out $OUT/map-recovery-7x7-dqn.json
$PGC thesis map-recovery --size 7x7 --maps 10 --defences 1 0.1 dynamic --learner table --force --out $OUT/map-recovery-7x7-table-10maps.json
# the report: a "Published claims" section over every audit
.venv/bin/python scripts/found_pairs.py  # the pairs found above, named in each system's canaries()
$PGC report $OUT/*.json --force --out $OUT/report --title "The thesis' four systems against their own claims"
