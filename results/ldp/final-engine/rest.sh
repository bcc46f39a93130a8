#!/bin/sh
# The 25 cells run.sh left (pure-ldp HM's last three, PCS's last seven, HCMS's fifteen), at 10⁶ releases per side on
# the engine of the commit that adds this file, one part after the other on one core, then each part against
# ../engine-check/bench.json (appended to compare.md). The committed parts were written by these commands to
# /tmp/ldp-rest/ (their `command` fields) from a checkout of that commit, at normal priority (parts.sh's `nice`
# changes no number).
set -e
. results/ldp/final-engine/parts.sh
part pure-ldp-hm-rest --libraries pure-ldp --protocols HM --ks 100 --epsilons 2 4 8
part pure-ldp-hcms --libraries pure-ldp --protocols HCMS
part pure-ldp-pcs-rest --libraries pure-ldp --protocols PCS --ks 25 --epsilons 4 8
part pure-ldp-pcs-rest-100 --libraries pure-ldp --protocols PCS --ks 100
compare pure-ldp-hm-rest pure-ldp-hcms pure-ldp-pcs-rest pure-ldp-pcs-rest-100 >> $OUT/compare.md
