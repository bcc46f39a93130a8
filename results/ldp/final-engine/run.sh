#!/bin/sh
# Re-runs the LDP bench (10⁶ releases per side per cell) on the engine of the commit that adds this folder, in parts
# on the two cores, and compares every finished cell with ../engine-check/bench.json. The committed parts were
# written by these commands (to /tmp/ldp-final/parts/, their `command` fields) from a checkout of that commit, beside
# other work, and stopped before they finished: pure-ldp's first part after 162 of its 165 cells, SR and
# PCS after 23 of 30, HCMS not started. Their wall times and timing audits ran under contention and are not
# comparable.
set -e
. results/ldp/final-engine/parts.sh
part pure-ldp --libraries pure-ldp --protocols DE SUE OUE BLH OLH FLH SHE THE RAPPOR HR HM & first=$!
(part reference --libraries reference && part multi-freq-ldpy --libraries multi-freq-ldpy &&
  part pure-ldp-sr-pcs --libraries pure-ldp --protocols SR PCS && part pure-ldp-hcms --libraries pure-ldp --protocols HCMS) & second=$!
part pure-ldp-cms --libraries pure-ldp --protocols CMS
wait $first
wait $second
compare reference multi-freq-ldpy pure-ldp pure-ldp-sr-pcs pure-ldp-cms pure-ldp-hcms > $OUT/compare.md
