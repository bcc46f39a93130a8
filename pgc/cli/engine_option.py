"""``--engine {local,ray} [--address ADDR]``: the option of ``pgc tune``, ``replicate``, ``audit`` and
``attack``, and the engine a command runs its independent tasks on (:mod:`pgc.engines`)."""

from __future__ import annotations

import argparse
import contextlib
from typing import Iterator

from pgc.errors import UserError
from pgc.options import add_engine as add_engine_arguments  # noqa: F401  (the option, defined once)


@contextlib.contextmanager
def command_engine(args: argparse.Namespace, *, install: bool = False) -> Iterator[object | None]:
    """The engine of ``--engine``/``--address`` for the command's lifetime: None for ``local`` (the
    command's own process and processes option), else a started engine, shut down at the end.
    ``install`` also makes it the trainer's default executor (``train_batch`` calls deep inside a
    command, as the replication grid's). A bad choice is a one-line :class:`UserError`."""
    from pgc.engines import from_args, installed

    try:
        engine = from_args(args.engine, args.address)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if engine is None:
        yield None
        return
    with engine, (installed(engine) if install else contextlib.nullcontext()):
        yield engine
