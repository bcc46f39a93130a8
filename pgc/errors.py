"""pgc-audit's errors and the exit codes of ``pgc``, in one place.

Exit codes (README: Exit codes):

======  =====================================================================================================
code    meaning
======  =====================================================================================================
0       done, nothing found (or nothing asked to fail on)
1       a finding: a ``--fail-on`` verdict, an attack above its bar, a self-test case misjudged
2       usage or input error: a bad option, a file that is not what it should be, a user's system that breaks
        the System contract, or an exception raised inside the user's own code (their factory, system,
        Flower ``client_fn``): the user's frames, then one line naming the call
3       internal error: an exception raised in pgc-audit's own packages (including their calls into libraries):
        its traceback and where to report it
130     interrupted (Ctrl-C)
======  =====================================================================================================

Errors: :class:`UserError` is what every check of a user's input raises (a bad option, a corrupted result file,
a claim that is not a claim, an output that exists): ``pgc`` prints it as one line and exits with code 2. It
subclasses ValueError, so ``except ValueError`` in a caller's code still catches it. Its kinds: input
(:class:`UserError` itself and the loaders' subclasses), :class:`SystemContractError` (a user's system that
breaks the contract) and the result files' :class:`pgc.schemas.SchemaError`.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What ``pgc``'s exit status means (the table above)."""

    OK = 0
    FINDING = 1
    USAGE = 2
    INTERNAL = 3
    INTERRUPTED = 130


class UserError(ValueError):
    """A user's input that pgc-audit refuses; the message says what is wrong in one line."""


class SystemContractError(UserError):
    """A user's system that does not meet the System contract (:mod:`pgc.contracts`); the message lists the
    checks that failed."""
