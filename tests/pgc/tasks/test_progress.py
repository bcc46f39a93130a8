"""pgc.tasks.progress: dated lines off a terminal, on time even when the work reports rarely; the heartbeat of a
command that shows no progress of its own."""

from __future__ import annotations

import io
import re
import time

from pgc.tasks.progress import LineProgress, heartbeat, progress_bar

DATED = re.compile(r"^\[\d\d:\d\d:\d\d\] ")


def test_line_progress_writes_on_time_without_updates():
    stream = io.StringIO()
    with LineProgress(10, "job", "slow jobs", interval=0.05, stream=stream) as bar:
        time.sleep(0.3)  # no update for six intervals: the timer still reports
        bar.update(5)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("slow jobs: started, 10 jobs to go")
    assert len(lines) >= 4 and all(DATED.match(x) for x in lines) and "\r" not in stream.getvalue()
    assert "0% (0/10 jobs)" in lines[1] and "? left" in lines[1]
    after = len(lines)
    time.sleep(0.15)
    assert len(stream.getvalue().splitlines()) == after  # closed: no more lines


def test_heartbeat_speaks_only_while_nothing_else_does():
    stream = io.StringIO()
    with heartbeat("pgc x", interval=0.08, stream=stream):
        time.sleep(0.4)
        quiet = len(stream.getvalue().splitlines())
        with LineProgress(3, "step", "work", interval=10.0, stream=io.StringIO()):
            time.sleep(0.3)  # a progress line is open: the heartbeat stays silent
        during = len(stream.getvalue().splitlines())
    lines = stream.getvalue().splitlines()
    assert quiet >= 2 and during == quiet
    assert all(DATED.match(x) and "pgc x: working" in x and "elapsed" in x for x in lines)


def test_disabled_progress_writes_nothing(capsys):
    with progress_bar(5, "job", "nothing", enabled=False) as bar:
        bar.update(5)
    with heartbeat("pgc x", enabled=False, interval=0.01):
        time.sleep(0.05)
    assert capsys.readouterr().err == ""


def test_silenced_turns_off_every_progress_and_restores_the_environment(capsys, monkeypatch):
    import os

    from pgc.tasks.progress import SILENCE_VARIABLE, progress_line, silenced

    monkeypatch.delenv(SILENCE_VARIABLE, raising=False)
    with silenced():
        assert os.environ[SILENCE_VARIABLE] == "off"  # the processes a command starts are silent too
        with progress_bar(5, "job", "nothing") as bar:
            bar.update(5)
            time.sleep(0.05)
        with heartbeat("pgc x", interval=0.01):
            time.sleep(0.05)
        progress_line("searching ...")
    assert SILENCE_VARIABLE not in os.environ
    assert capsys.readouterr().err == ""
    with silenced(False):
        progress_line("searching ...")
    assert "searching ..." in capsys.readouterr().err


def test_every_command_that_runs_takes_no_progress():
    """--progress/--no-progress on every command and subcommand that runs (a parser without subcommands)."""
    from pgc.cli.main import _available, _load, _parser, _subcommand_actions

    def leaves(parser):
        subs = _subcommand_actions(parser)
        if not subs:
            yield parser
        for action in subs:
            for child in action.choices.values():
                yield from leaves(child)

    names = _available()
    checked = 0
    for name in names:
        command_parser = _subcommand_actions(_parser(names, name, _load(name)))[0].choices[name]
        for leaf in leaves(command_parser):
            assert "--no-progress" in leaf._option_string_actions, leaf.prog
            checked += 1
    assert checked >= len(names)


def test_silenced_blocks_of_two_threads_restore_the_environment_once_both_end(monkeypatch):
    import os
    import threading

    from pgc.tasks.progress import SILENCE_VARIABLE, silenced

    monkeypatch.delenv(SILENCE_VARIABLE, raising=False)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def second():
        first_in.wait()
        with silenced():
            second_in.set()
            first_out.wait()  # the first block ends while this one runs
            assert os.environ.get(SILENCE_VARIABLE) == "off"

    thread = threading.Thread(target=second)
    thread.start()
    with silenced():
        first_in.set()
        second_in.wait()
    first_out.set()
    thread.join()
    assert SILENCE_VARIABLE not in os.environ


def test_an_explicit_progress_overrides_an_inherited_silence(monkeypatch):
    """--progress shows progress where the environment says PGC_PROGRESS=off; neither flag leaves it silent;
    the environment is as it was once the command ends."""
    import os

    from pgc.cli import main as cli
    from pgc.tasks.progress import SILENCE_VARIABLE

    seen = []

    class Probe:
        def add_arguments(self, p):
            pass

        def run(self, args):
            seen.append((args.progress, os.environ.get(SILENCE_VARIABLE)))
            return 0

    monkeypatch.setattr(cli, "_available", lambda: ["probe"])
    monkeypatch.setattr(cli, "_load", lambda name: Probe())
    monkeypatch.setitem(cli.COMMANDS, "probe", (None, "a probe"))
    monkeypatch.setenv(SILENCE_VARIABLE, "off")
    assert cli.main(["probe"]) == 0
    assert cli.main(["probe", "--progress"]) == 0
    assert cli.main(["probe", "--no-progress"]) == 0
    assert os.environ[SILENCE_VARIABLE] == "off"
    monkeypatch.delenv(SILENCE_VARIABLE)
    assert cli.main(["probe"]) == 0
    assert seen == [(False, "off"), (True, None), (False, "off"), (True, None)]
