"""Constants shared by the mechanisms (:mod:`pgc.mechanisms`) and their compiled twins
(:mod:`pgc.kernel`): both import this module, neither imports the other's internals."""

SNAP_BOUND_SCALES = 40.0  # secure Laplace clamps outputs to ±(C/2 + 40·C/ε): P(|Lap| > 40 b) = e^-40

# mechanism kinds of the trainer's compiled fast path (pgc.kernel.privatize_row)
MECH_EXTERNAL = 0  # any other Mechanism: the trainer returns to Python for each submission
MECH_NONE = 1
MECH_LAPLACE = 2
MECH_LAPLACE_SECURE = 3
MECH_PRS = 4
MECH_GAUSSIAN = 5
