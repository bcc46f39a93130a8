#!/bin/sh
# Regenerates results/thesis/ from the repository root after scripts/setup.sh: the thesis' four systems
# (dprl) audited against their own claims at 100,000 releases per side, their textbook references, the
# worst-pair searches, the growth of capped bounds with n, the attacks, and the report (about 140 min on 2 cores,
# most of it the map-recovery runs).
set -e
PGC=.venv/bin/pgc
OUT=results/thesis
# audit_system SPEC [OPTION...]: a System at 100,000 releases per side
audit_system() { spec=$1; shift; $PGC audit system "$spec" --samples 100000 "$@"; }
# ch. 3 advising (Table 3.5: ε = 1, S = 1; experiment 3: ε in 0.1 0.4 0.7 1 2)
for e in 0.1 0.4 0.7 1 2; do
  audit_system dprl-advising --setting epsilon=$e --force --out $OUT/advising-eps$e.json
done
audit_system dprl-advising --pair "same actions as the student (line 3): one Q 2 vs 0" --force --out $OUT/advising-same-actions.json
audit_system dprl-advising --setting noise=fresh --force --out $OUT/advising-fresh-noise.json
audit_system dprl-advising --search-pair --force --out $OUT/advising-searched.json
audit_system dprl-advising --adversarial --force --out $OUT/advising-adversarial-student.json  # the student's Q chosen by CMA-ES
audit_system dprl-advising --setting reference=true --force --out $OUT/advising-reference.json
audit_system dprl-advising --setting reference=true --search-pair --force --out $OUT/advising-reference-searched.json
# ch. 4 planning (§4.8.1: ε = 0.5; Fig. 4.4(a))
audit_system dprl-planning --pair "Fig. 4.4(a) vs without (b,1)" --force --out $OUT/planning-node-b1.json
audit_system dprl-planning --pair "Fig. 4.4(a) vs without (b,5)" --force --out $OUT/planning-node-b5.json
audit_system dprl-planning --setting relation='"edge"' --force --out $OUT/planning-edge-length.json
audit_system dprl-planning --setting d_max='"data"' --force --out $OUT/planning-dmax-data.json
audit_system dprl-planning --search-pair --force --out $OUT/planning-searched.json
audit_system dprl-planning --search-pair --channels degree_histogram --force --out $OUT/planning-histogram-searched.json
audit_system dprl-planning --setting reference=true --search-pair --force --out $OUT/planning-reference-searched.json
# ch. 5 DP-DRL (N = 10; ε = 0.1, 1 and dynamic; "obfuscate" as flip and as a fresh random bit)
for e in 0.1 1 '"dynamic"'; do
  name=$(echo $e | tr -d '"')
  audit_system dprl-dpdrl --setting epsilon=$e --force --out $OUT/dpdrl-flip-eps$name.json
  audit_system dprl-dpdrl --setting epsilon=$e --setting obfuscation='"resample"' --force --out $OUT/dpdrl-resample-eps$name.json
done
audit_system dprl-dpdrl --search-pair --force --out $OUT/dpdrl-searched.json
audit_system dprl-dpdrl --setting obfuscation='"resample"' --search-pair --force --out $OUT/dpdrl-resample-searched.json
audit_system dprl-dpdrl --setting reference=true --force --out $OUT/dpdrl-reference-eps0.1.json
$PGC audit system dprl-dpdrl --samples 1000000 --setting reference=true --force --out $OUT/dpdrl-reference-eps0.1-n1e6.json
audit_system dprl-dpdrl --setting reference=true --setting epsilon='"dynamic"' --force --out $OUT/dpdrl-reference-dynamic.json
# ch. 6 one-parameter defence (§6.5: k = 10, m = 5, ε in 0.1 0.7 1.4 2.0; claim k·ε)
for e in 0.1 0.7 1.4 2.0; do
  audit_system dprl-oneparam --setting epsilon=$e --force --out $OUT/oneparam-thesis-eps$e.json
done
audit_system dprl-oneparam --setting utility_origin='"text"' --force --out $OUT/oneparam-utility-as-text.json
audit_system dprl-oneparam --search-pair --force --out $OUT/oneparam-searched.json
audit_system dprl-oneparam --setting relation='"member"' --pair "member: confident vs typical prediction" --force --out $OUT/oneparam-member.json
audit_system dprl-oneparam --setting relation='"member"' --search-pair --force --out $OUT/oneparam-member-searched.json
audit_system dprl-oneparam --setting reference=true --setting relation='"member"' --pair "member: near-certain predictions of two different classes" --force --out $OUT/oneparam-reference-member.json
audit_system dprl-oneparam --setting reference=true --search-pair --force --out $OUT/oneparam-reference-searched.json
# where ε_LB sits at its cap: how it grows with the sample budget (finite or unbounded leak)
for n in 10000 100000 1000000; do
  $PGC audit system dprl-dpdrl --samples $n --force --out $OUT/growth/dpdrl-flip-n$n.json
  $PGC audit system dprl-oneparam --samples $n --force --out $OUT/growth/oneparam-thesis-n$n.json
  $PGC audit system dprl-planning --samples $n --channels route_probabilities --force --out $OUT/growth/planning-routes-n$n.json
  $PGC audit system dprl-advising --samples $n --pair "same actions as the student (line 3): one Q 2 vs 0" --channels teacher_q --force --out $OUT/growth/advising-same-actions-n$n.json
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
