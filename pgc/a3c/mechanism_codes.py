"""Constants shared by the compiled fast path (:mod:`pgc.a3c.twins`) and the kernel (:mod:`pgc.a3c.kernel`)."""

from pgc.mechanisms.core import SNAP_BOUND_SCALES  # noqa: F401  (the kernel's secure-Laplace twin clamps with it)

# mechanism kinds of the trainer's compiled fast path (pgc.a3c.kernel.privatize_row)
MECH_EXTERNAL = 0  # any other Mechanism: the trainer returns to Python for each submission
MECH_NONE = 1
MECH_LAPLACE = 2
MECH_LAPLACE_SECURE = 3
MECH_PRS = 4
MECH_GAUSSIAN = 5
