"""The ``pgc`` command line (:mod:`pgc.cli.main`); :func:`entry` is the console script."""


def entry() -> None:
    """The ``pgc`` console script: :func:`pgc.cli.main.main`, its imports inside, so that Ctrl-C at any moment of
    start-up is one line and exit code 130 too, even where a library's callback swallowed it
    (:mod:`pgc.interrupts`). Once the command has done its work and flushed its output, Ctrl-C no longer changes
    its exit code."""
    import sys

    from pgc import interrupts

    interrupts.install()
    try:
        from .main import main

        code = main()
        sys.stdout.flush()
        if code != 130:
            interrupts.ignore_from_now_on()
    except KeyboardInterrupt:
        print(f"{interrupts.command_label(sys.argv[1:])}: interrupted", file=sys.stderr)
        code = 130
    if code == 130:
        _exit_interrupted()
    sys.exit(int(code))


def _exit_interrupted() -> None:
    """Exit with code 130 after the exit handlers. A KeyboardInterrupt that passed through code a C extension ran
    (a library's start-up) marks the interpreter, which then ends itself by SIGINT at exit even though the
    interrupt was handled; leaving through ``os._exit`` keeps the documented exit code."""
    import atexit
    import os
    import sys

    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(130)
