"""The one user-error exception of pgc-audit.

:class:`UserError` is what every check of a user's input raises (a bad option, a corrupted result file, a
claim that is not a claim, an output that exists): ``pgc`` prints it as one line and exits with code 2.
It subclasses ValueError, so ``except ValueError`` in a caller's code still catches it. Any other
exception out of a command is a bug in pgc-audit: ``pgc`` shows its traceback and says where to report it.
"""

from __future__ import annotations


class UserError(ValueError):
    """A user's input that pgc-audit refuses; the message says what is wrong in one line."""
