"""Ctrl-C always ends a command: raised again where a callback swallowed it, and never followed by a published
result. Each check runs in a child process: installing the handler changes process-wide state."""

import subprocess
import sys
import textwrap

from pgc.interrupts import command_label


def _child(code: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )


def test_an_interrupt_a_weakref_callback_swallowed_is_raised_again_outside_it(tmp_path):
    done = _child(
        """
        import time, weakref
        from pgc import interrupts

        interrupts.install()

        class Node:
            pass

        def callback(ref):
            raise KeyboardInterrupt  # as a Ctrl-C landing in importlib's module-lock callback

        node = Node()
        ref = weakref.ref(node, callback)
        try:
            del node  # Python can only print what the callback raises, and carries on
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                pass
            print("carried on")
        except KeyboardInterrupt:
            print("interrupted")
        """,
        tmp_path,
    )
    assert (done.stdout.strip(), done.stderr) == ("interrupted", "")  # and no "Exception ignored" message


def test_a_swallowed_interrupt_stops_the_next_atomic_write(tmp_path):
    done = _child(
        """
        import os, signal, time
        from pgc import interrupts
        from pgc.files import write_bytes_atomic
        from pgc.outdirs import replace_directory_atomically

        interrupts.install()
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except:  # a library that catches everything
            pass
        try:
            write_bytes_atomic("result.json", b"{}")
            print("file written")
        except KeyboardInterrupt:
            print("file interrupted")
        try:
            with replace_directory_atomically("out") as folder:
                (folder / "result.json").write_text("{}")
            print("folder written")
        except KeyboardInterrupt:
            print("folder interrupted")
        print(sorted(os.listdir(".")))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    # neither is published, and nothing half-written is left behind
    assert done.stdout.splitlines() == ["file interrupted", "folder interrupted", "[]"], done.stdout


def test_the_label_is_the_command_typed():
    assert command_label(["audit", "system", "x.py:make"]) == "pgc audit"
    assert command_label(["--help"]) == "pgc"
    assert command_label([]) == "pgc"
