"""The deprecated spelling of ``pgc audit``'s subcommands: one mode flag among every audit option
(``pgc audit --system SPEC --samples 2000``), kept for one release.

:func:`rewrite` turns such an argv into the subcommand form before argparse reads it (``system SPEC --samples
2000``): the mode flag becomes the subcommand and its value the positional target; ``--mechanism NAME`` beside
``--run DIR`` stays the run's override; ``--adversarial-model`` and ``--adversarial-curve`` name their own
subcommands. The flag form took every audit option in every mode and ignored those the mode did not use; so
does the rewrite: such an option is checked as the flag form checked it (its value, and the refusals of the
flag form, word for word: two modes, ``--pair`` without a System, ``--samples auto`` outside the System audits,
``--address`` without ``--engine ray``, ...) and then left out. An argv that starts with a subcommand (or
``-h``) is left as it is.
"""

from __future__ import annotations

import argparse
import difflib
import re
from dataclasses import dataclass

from pgc.errors import UserError

# flag -> the subcommand it names
MODE_FLAGS = {
    "--mechanism": "mechanism",
    "--run": "run",
    "--self-test": "self-test",
    "--system": "system",
    "--one-run": "one-run",
    "--flower": "flower",
    "--flower-one-run": "flower-one-run",
    "--ldp": "ldp",
    "--nvflare": "nvflare",
}
ADVERSARIAL_FLAGS = ("--adversarial-model", "--adversarial-curve")
FLAG_ONLY = {"--self-test", *ADVERSARIAL_FLAGS}  # flags without a value
SYSTEM_AUDITS = ("--system", "--flower", "--ldp", "--nvflare")
EXACTLY_ONE = (
    "give exactly one of --mechanism NAME, --run DIR, --self-test, --system SPEC, --one-run RUN, "
    "--flower MODULE:APP, --flower-one-run MODE, --ldp LIBRARY:PROTOCOL, --nvflare MODULE:FILTER"
)


def add_deprecated_flags(p: argparse.ArgumentParser) -> None:
    """The mode flags on ``pgc audit``'s own parser, hidden from its help: :func:`rewrite` turns them into the
    subcommands before parsing; declared, they stay in the parser's list of options (shell completion, the docs'
    checks). Long options are not abbreviated at this level, so a subcommand's ``--adversarial`` never reads as
    an abbreviation of ``--adversarial-model``."""
    p.allow_abbrev = False
    for flag in [*MODE_FLAGS, *ADVERSARIAL_FLAGS]:
        kind = {"action": "store_true"} if flag in FLAG_ONLY else {"metavar": "VALUE"}
        p.add_argument(flag, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kind)


@dataclass
class _Item:
    """One argument of the flag form: an option (its name, as given, and its values) or a lone word."""

    option: str | None  # the option's full name; None: a word that is no option's
    tokens: list[str]
    values: list[str]


class _Options:
    """Every option of every subcommand (the flag form's options) and which subcommand takes which."""

    def __init__(self, subcommands):
        self.actions: dict[str, argparse.Action] = {}
        self.taken: dict[str, set[str]] = {}
        for name, subcommand in subcommands.items():
            parser = argparse.ArgumentParser(add_help=False)
            subcommand.add_arguments(parser)
            strings = {s for action in parser._actions for s in action.option_strings}
            self.taken[name] = strings
            for action in parser._actions:
                for s in action.option_strings:
                    self.actions.setdefault(s, action)
        self.names = set(self.actions) | set(MODE_FLAGS) | set(ADVERSARIAL_FLAGS)

    def resolve(self, name: str) -> str | None:
        """The option ``name`` spells (itself or, as argparse, an abbreviation of one option only), else None."""
        if name in self.names:
            return name
        matches = [o for o in self.names if o.startswith(name)]
        return matches[0] if len(matches) == 1 else None

    def nargs(self, option: str):
        if option in FLAG_ONLY:
            return 0
        if option in MODE_FLAGS:
            return None
        return self.actions[option].nargs


def rewrite(argv: list[str]) -> list[str]:
    """``argv`` (after ``audit``) in the subcommand form; a :class:`UserError` for what the flag form refused."""
    from .subcommands import SUBCOMMANDS

    if not argv or not argv[0].startswith("-") or argv[0] in ("-h", "--help"):
        return argv  # the subcommand form (argparse says what is wrong with it)
    options = _Options(SUBCOMMANDS)
    items = _items(argv, options)
    given = {
        item.option: item.values[0] if item.values else None
        for item in items
        if item.option in MODE_FLAGS or item.option in ADVERSARIAL_FLAGS
    }  # the last, as argparse
    if not given:
        raise UserError(_no_mode(argv, options))
    flags = {flag: value for flag, value in given.items() if value != ""}  # an empty value names no mode
    name, head = _subcommand(flags)
    rest = [item for item in items if item.option not in given]
    _check_samples(rest, name in ("system", "flower", "ldp", "nvflare"))
    dropped = [item for item in rest if item.option is not None and item.option not in options.taken[name]]
    _check_dropped(dropped, options, flags)
    return [*head, *(token for item in rest if item not in dropped for token in item.tokens)]


def _subcommand(flags: dict[str, str | None]) -> tuple[str, list[str]]:
    """The subcommand the mode flags name, and its words (name, target, the run of a crafted model)."""
    modes = [flag for flag in MODE_FLAGS if flag in flags]
    if "--run" in flags and "--mechanism" in flags:
        modes.remove("--mechanism")  # --mechanism overrides the run's mechanism
    if len(modes) != 1:
        raise UserError(EXACTLY_ONE)
    mode = modes[0]
    adversarial = [flag for flag in ADVERSARIAL_FLAGS if flag in flags]
    if mode == "--system" and adversarial:
        raise UserError("--system takes --adversarial (the system's own crafted family or a search of its broadcasts)")
    if len(adversarial) == 2:
        raise UserError("give one of --adversarial-model, --adversarial-curve")
    if adversarial and mode not in ("--mechanism", "--run"):
        raise UserError(f"--adversarial-model/--adversarial-curve audit a mechanism or a run, not {mode}")
    if adversarial == ["--adversarial-curve"]:
        if mode == "--run":
            raise UserError("--adversarial-curve works with --mechanism (the honest θ is --honest-model)")
        return "adversarial-curve", ["adversarial-curve", flags["--mechanism"]]
    mechanism = [] if "--mechanism" not in flags else [flags["--mechanism"]]
    if adversarial:
        run = [] if mode != "--run" else ["--run", flags["--run"]]
        return "adversarial-model", ["adversarial-model", *mechanism, *run]
    if mode == "--run":
        return "run", ["run", flags["--run"], *(["--mechanism", *mechanism] if mechanism else [])]
    return MODE_FLAGS[mode], [MODE_FLAGS[mode], *([] if mode in FLAG_ONLY else [flags[mode]])]


def _items(argv: list[str], options: _Options) -> list[_Item]:
    """``argv`` as options with their values (``--opt VALUE``, ``--opt=VALUE``, an abbreviation) and lone words,
    read as argparse reads them."""
    items, i = [], 0
    while i < len(argv):
        token = argv[i]
        if token == "--":  # words from here
            items += [_Item(None, [t], []) for t in argv[i:]]
            break
        name, eq, inline = token.partition("=")
        option = options.resolve(name) if token.startswith("--") else None
        if option is None:
            items.append(_Item(None, [token], []))
            i += 1
            continue
        nargs = options.nargs(option)
        if eq:
            if nargs == 0:
                raise UserError(f"argument {option}: ignored explicit argument {inline!r}")
            items.append(_Item(option, [token], [inline]))
            i += 1
            continue
        values = []
        j = i + 1
        while (
            j < len(argv)
            and not _is_option(argv[j])
            and argv[j] != "--"
            and (nargs in ("*", "+") or len(values) < (1 if nargs in (None, "?") else nargs))
        ):
            values.append(argv[j])
            j += 1
        needed = 1 if nargs in (None, "+") else 0 if nargs in ("?", "*") else nargs
        if len(values) < needed:
            raise UserError(f"argument {option}: expected {_count(nargs)}")
        items.append(_Item(option, argv[i:j], values))
        i = j
    return items


def _count(nargs) -> str:
    return {None: "one argument", "+": "at least one argument"}.get(nargs, f"{nargs} arguments")


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse's


def _is_option(token: str) -> bool:
    """Whether argparse reads ``token`` as an option rather than a value (as argparse: a negative number, a lone
    ``-`` and text with a space are values)."""
    return token.startswith("-") and token != "-" and not _NEGATIVE_NUMBER.match(token) and " " not in token


def _check_samples(rest: list[_Item], system_audit: bool) -> None:
    for item in rest:
        if item.option == "--samples" and item.values[0].startswith("auto") and not system_audit:
            raise UserError("--samples auto[:BUDGET] works with --system, --flower, --ldp and --nvflare")


def _check_dropped(dropped: list[_Item], options: _Options, flags: dict[str, str | None]) -> None:
    """The options the named audit does not take, checked as the flag form checked them before ignoring them."""
    given = {}
    for item in dropped:
        action = options.actions[item.option]
        given[action.dest] = [_value(action, item.option, v) for v in item.values] if action.nargs != 0 else True
    if "secrets" in given or "adversarial" in given:
        raise UserError("--secrets and --adversarial go with --system")
    if "pair" in given:
        raise UserError("--pair goes with --system, --flower or --nvflare")
    if "datasets" in given:
        raise UserError("--datasets goes with --flower")
    if given.get("delta") and not (0.0 <= given["delta"][-1] < 1.0):
        raise UserError("--delta must lie in [0, 1)")
    if "address" in given and given.get("engine", ["local"])[-1] != "ray":
        raise UserError("--address is only for --engine ray")
    if any(k < 2 for k in given.get("compositions") or []):
        raise UserError("--compositions must be integers >= 2")
    if "--adversarial-model" not in flags and any(".." in v for v in given.get("pairs") or [] if isinstance(v, str)):
        raise UserError("a range LO..HI in --pairs needs --adversarial-model")


def _value(action: argparse.Action, option: str, text: str):
    """``text`` as ``action`` reads it, or argparse's refusal as a UserError."""
    try:
        value = action.type(text) if action.type is not None else text
    except argparse.ArgumentTypeError as exc:
        raise UserError(f"argument {option}: {exc}") from None
    except (TypeError, ValueError):
        raise UserError(
            f"argument {option}: invalid {getattr(action.type, '__name__', 'value')} value: {text!r}"
        ) from None
    if action.choices is not None and value not in action.choices:
        raise UserError(
            f"argument {option}: invalid choice: {text!r} (choose from {', '.join(map(repr, action.choices))})"
        )
    return text if action.dest == "pairs" else value


def _no_mode(argv: list[str], options: _Options) -> str:
    """What to say of a flag form without a mode flag: its unknown options, else what to give."""
    unknown = [t for t in argv if t.startswith("--") and t != "--" and options.resolve(t.partition("=")[0]) is None]
    if unknown:
        flags = [*MODE_FLAGS, *ADVERSARIAL_FLAGS]
        close = difflib.get_close_matches(unknown[0].partition("=")[0], sorted(options.names), n=1)
        hint = (
            ""
            if not close
            else (f" (did you mean pgc audit {close[0][2:]}?)" if close[0] in flags else f" (did you mean {close[0]}?)")
        )
        return (
            f"unrecognized arguments: {' '.join(unknown)}{hint}; name what to audit: pgc audit SUBCOMMAND "
            "TARGET (see pgc audit --help)"
        )
    return "name what to audit: pgc audit SUBCOMMAND TARGET, e.g. pgc audit system SPEC (see pgc audit --help)"
