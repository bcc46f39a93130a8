"""The ``pgc`` command line: one subcommand per module in :mod:`pgc.cli.commands`.

Each command is a class with ``help``, ``add_arguments(parser)`` and ``run(args) -> int`` (Optuna's
CLI style); one with deprecated spellings also has ``rewrite_argv(argv) -> argv``, called before parsing.
Commands are imported lazily, so ``pgc train`` never imports the auditor or optuna.
Exit codes are :class:`pgc.errors.ExitCode`: bad input raises :class:`pgc.errors.UserError`, shown as one
line on stderr with exit code 2 (so do the file system's refusals, an OSError naming a file, and running out
of memory); an exception raised inside the user's own code (:mod:`pgc.usercode`) shows the user's frames and one
line naming the call, exit code 2; any other exception is a bug of pgc-audit: its traceback, where to report
it, exit code 3; Ctrl-C is one line and exit code 130 (start-up included: :func:`pgc.cli.entry`). While a command runs,
:func:`pgc.tasks.progress.heartbeat` writes a dated line to stderr whenever 30 s pass with no progress shown
(``--no-progress`` turns it off).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import re
import sys
from collections.abc import Sequence
from typing import Protocol

from pgc.errors import ExitCode, UserError

# name -> (module:Class, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "train": (
        "pgc.cli.commands.train:TrainCommand",
        "train PGC-A3C (K trials at once); writes checkpoints, transcript, summary",
    ),
    "bench": (
        "pgc.cli.commands.bench:BenchCommand",
        "benchmarks that print a ratio against a reference measured in the same run",
    ),
    "replicate": (
        "pgc.cli.commands.replicate:ReplicateCommand",
        "replicate the paper's Tables 1-3 and Figures 2-3 with a zero-information control",
    ),
    "audit": (
        "pgc.cli.commands.audit:AuditCommand",
        "empirical epsilon lower bounds: mechanisms, trained models, transcript channels",
    ),
    "attack": (
        "pgc.cli.commands.attack:AttackCommand",
        "dynamics-inference attacks recovering gravity from submissions",
    ),
    "report": ("pgc.cli.commands.report:ReportCommand", "privacy report (HTML, Markdown, JSON) from result files"),
    "tune": ("pgc.cli.commands.tune:TuneCommand", "tune epsilon and mechanism settings with optuna"),
    "pipeline": (
        "pgc.cli.commands.pipeline:PipelineCommand",
        "the main job: train -> audit -> attack -> report on embedded defaults",
    ),
    "bandit": (
        "pgc.cli.commands.bandit:BanditCommand",
        "federated linear contextual bandits: regret study and first-user attack",
    ),
    "thesis": (
        "pgc.cli.commands.thesis:ThesisCommand",
        "attacks on the thesis' four systems, beside the thesis' tables",
    ),
}


REPORT_BUGS = (
    "this is a bug in pgc-audit {version}, not in your input: please report it with the command line "
    "and the traceback above (README: Reporting a bug)"
)


class Command(Protocol):
    help: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _load(name: str) -> Command:
    target, _ = COMMANDS[name]
    module_name, cls_name = target.split(":")
    return getattr(importlib.import_module(module_name), cls_name)()


def _available() -> list[str]:
    out = []
    for name, (target, _) in COMMANDS.items():
        if importlib.util.find_spec(target.split(":")[0]) is not None:
            out.append(name)
    return out


def one_line(exc: BaseException) -> str:
    """An exception as one line of text (its first non-empty line, else its type)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors as one line (``pgc CMD: error: ...``) and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        text = " ".join(message.split())
        wrong = re.search(r"invalid choice: '([^']*)'", text)
        commands = [c for a in _subcommand_actions(self) for c in a.choices]
        if wrong and commands:  # a mistyped command: the closest one
            near = difflib.get_close_matches(wrong.group(1), commands, 1)
            text += f"; did you mean {near[0]}?" if near else ""
        self.exit(2, f"{self.prog}: error: {text} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        """As argparse's, but an unknown option is reported by the (sub)command it was given to, with the
        closest of that command's options."""
        argv = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(argv, namespace)
        if extras:
            parser = self._command_parser(argv)
            options = [o for action in parser._actions for o in action.option_strings]
            near = [
                m for e in extras if e.startswith("-") for m in difflib.get_close_matches(e.split("=")[0], options, 1)
            ]
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            parser.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def _command_parser(self, argv: list[str]) -> argparse.ArgumentParser:
        """The deepest subcommand parser that ``argv`` names."""
        parser: argparse.ArgumentParser = self
        for token in argv:
            subs = _subcommand_actions(parser)
            if subs and token in subs[0].choices:
                parser = subs[0].choices[token]
        return parser


def _subcommand_actions(parser: argparse.ArgumentParser) -> list[argparse._SubParsersAction]:
    """The parser's subcommand actions (its COMMAND or SUBCOMMAND argument)."""
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pgc ARGV``; the exit code (:class:`pgc.errors.ExitCode`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = None
    try:
        names = _available()
        chosen = argv[0] if argv and argv[0] in names else None
        command = _load(chosen) if chosen else None
        if hasattr(command, "rewrite_argv"):  # a command's deprecated spellings, in its current form
            argv = [chosen, *command.rewrite_argv(argv[1:])]
        parser = _parser(names, chosen, command)
        args = parser.parse_args(argv)
        args._argv = list(argv)  # the command line as given (main may run inside another program)
        if chosen is None:
            parser.print_help(sys.stderr if argv else sys.stdout)
            return ExitCode.USAGE if argv else ExitCode.OK
        from pgc.tasks.progress import chosen as chosen_progress
        from pgc.tasks.progress import heartbeat, wanted

        # a command that shows no progress of its own for 30 s says it is still working; --no-progress: none at
        # all; --progress: shown even where the environment holds PGC_PROGRESS=off; neither: as the environment says
        flag = getattr(args, "progress", None)
        if hasattr(args, "progress"):
            args.progress = wanted(flag)
        with chosen_progress(flag), heartbeat(f"pgc {chosen}"):
            return int(args._command.run(args) or 0)
    except KeyboardInterrupt:
        print(f"pgc{f' {chosen}' if chosen else ''}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Exception as exc:  # noqa: BLE001 — every exception ends in one of the exit codes above
        return report_exception(exc, f"pgc {chosen}" if chosen else "pgc")


def _parser(names: list[str], chosen: str | None, command: Command | None) -> _Parser:
    parser = _Parser(prog="pgc", description="pgc-audit: privacy auditing and attacks for LDP distributed RL")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in names:
        p = sub.add_parser(name, help=COMMANDS[name][1], description=COMMANDS[name][1])
        if name == chosen:
            command.add_arguments(p)
            p.set_defaults(_command=command)
            _offer_progress(p)
    return parser


def _offer_progress(parser: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress`` on every command and subcommand that runs (a parser without subcommands),
    where it has not its own."""
    subs = _subcommand_actions(parser)
    for action in subs:
        for child in dict.fromkeys(action.choices.values()):  # an alias names its parser twice
            _offer_progress(child)
    if not subs and "--progress" not in parser._option_string_actions:
        from pgc.options import add_progress

        add_progress(parser)


def report_exception(exc: Exception, prog: str) -> int:
    """Say what went wrong on stderr and return the exit code: the user's input or code (2), or a bug (3)."""
    from pgc.usercode import user_code_failure

    if isinstance(exc, UserError):  # the one user error: one line (after the user's frames, where it wraps theirs)
        cause = exc.__cause__
        failure = user_code_failure(cause) if isinstance(cause, Exception) else None
        if failure is not None:
            print(failure.frames_text(), end="", file=sys.stderr)
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return ExitCode.USAGE
    failure = user_code_failure(exc)
    # the machine's refusals (no space left, read-only file system, permission denied, a missing input, memory):
    # one line wherever they were raised, naming the user's call when it was theirs
    theirs = f" (raised in your code: {failure.call})" if failure is not None else ""
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"{prog}: error: {exc.strerror or one_line(exc)}{where}{theirs}", file=sys.stderr)
        return ExitCode.USAGE
    if isinstance(exc, MemoryError):
        print(f"{prog}: error: out of memory (use smaller settings){theirs}", file=sys.stderr)
        return ExitCode.USAGE
    if failure is not None:  # raised in the user's own code: their frames, then the call in one line
        print(failure.frames_text(), end="", file=sys.stderr)
        print(f"{prog}: error in your code: {failure.line}", file=sys.stderr)
        return ExitCode.USAGE
    import traceback  # a bug: the traceback, then where to report it

    from pgc import __version__

    traceback.print_exception(exc)
    print(f"{prog}: " + REPORT_BUGS.format(version=__version__), file=sys.stderr)
    return ExitCode.INTERNAL


if __name__ == "__main__":
    sys.exit(main())
