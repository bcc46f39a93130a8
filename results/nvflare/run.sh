#!/bin/sh
# Regenerates results/nvflare/ from the repository root after scripts/setup.sh (about 75 min on 2 cores, one
# process). Every audit runs NVFlare's filter through its real process() path on a Shareable, with a FOBS round
# trip (what the server receives), on the small network's real training updates or on updates at the bound.
set -e
PGC=.venv/bin/pgc
F=nvflare.app_common.filters
R=results/nvflare
# SVTPrivacy at its defaults (claim ε = 25.5 per call on this 2,539-entry update), the three pairs
$PGC audit nvflare $F:SVTPrivacy --pair "trained, equal steps" --samples 100000 --out $R/svt-trained-equal-steps.json --force
$PGC audit nvflare $F:SVTPrivacy --pair "trained, unequal steps" --samples 100000 --out $R/svt-trained-unequal-steps.json --force
$PGC audit nvflare $F:SVTPrivacy --pair "at the bound" --samples 100000 --out $R/svt-at-the-bound.json --force
# SVTPrivacy with a release budget of 1 (claim ε = 1.1): a claim an audit can refute
$PGC audit nvflare $F:SVTPrivacy --setting epsilon_release=1 --pair "at the bound" --samples 20000 --out $R/svt-release1-at-the-bound.json --force
$PGC audit nvflare $F:SVTPrivacy --setting epsilon_release=1 --pair "trained, equal steps" --samples 20000 --out $R/svt-release1-trained-equal-steps.json --force
$PGC audit nvflare $F:SVTPrivacy --setting epsilon_release=1 --pair "trained, unequal steps" --samples 20000 --out $R/svt-release1-trained-unequal-steps.json --force
# SVTPrivacy on WEIGHTS (the initial model plus the update), at its defaults
$PGC audit nvflare $F:SVTPrivacy --setting data_kind=WEIGHTS --pair "trained, equal steps" --samples 20000 --out $R/svt-weights-trained-equal-steps.json --force
# PercentilePrivacy and ExcludeVars at their defaults: no noise, so 20,000 per side reach the cap
$PGC audit nvflare $F:PercentilePrivacy --pair "trained, equal steps" --samples 20000 --out $R/percentile-trained-equal-steps.json --force
$PGC audit nvflare $F:PercentilePrivacy --pair "at the bound" --samples 20000 --out $R/percentile-at-the-bound.json --force
$PGC audit nvflare $F:ExcludeVars --pair "trained, equal steps" --samples 20000 --out $R/exclude-vars-trained-equal-steps.json --force
$PGC audit nvflare $F:ExcludeVars --pair "at the bound" --samples 20000 --out $R/exclude-vars-at-the-bound.json --force
# the report over them (its library section: filter, parameters, claim and its reading, certified ε, verdict, why)
$PGC report $R/*.json --out $R/report --title "NVIDIA FLARE filter audits" --force
