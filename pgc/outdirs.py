"""Output folders pgc writes: the guard (never the working or home folder, never a folder pgc did not
write, nor one another command wrote), the OS lock of a writer, the atomic replacement of a whole folder
(built under a temporary name beside it), and the clean-up of what killed writers left.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pgc.errors import UserError
from pgc.files import json_safe
from pgc.interrupts import raise_if_interrupted

MARKER_FILE = ".pgc-output"  # written by pgc into every folder it creates; --force replaces only these
# folders written before the marker existed (or before it named its command): file -> (key, prefix, command)
_LEGACY_SIGNATURES = {
    "summary.json": ("format", "pgc-run/", "train"),
    "replicate.json": ("kind", "replicate", "replicate"),
    "report.json": ("format", "pgc-report/", "report"),
    "tune.json": ("format", "pgc-tune/", "tune"),
    "pipeline.json": ("format", "pgc-pipeline/", "pipeline"),
}


class OutputDirError(UserError):
    """An output folder that may not be written (a user error: one line, exit code 2)."""


class OutputExistsError(OutputDirError, FileExistsError):
    """The output folder exists and is not empty (and replacing it was not asked for)."""


class OutputBusyError(OutputDirError):
    """Another process holds the output folder's lock."""


def _is_ancestor_or_same(a: Path, b: Path) -> bool:
    return a == b or a in b.parents


def is_pgc_output(path: str | Path) -> bool:
    """Whether ``path`` is a folder pgc wrote: it holds the marker file (or, for folders written before
    the marker existed, a pgc run ``summary.json`` / ``replicate.json`` of the expected format)."""
    path = Path(path)
    return (path / MARKER_FILE).is_file() or _legacy_command(path) is not None


def output_command(path: str | Path) -> str | None:
    """The pgc command that wrote the folder ``path`` (``train``, ``report``, ``pipeline``, ...): the one its
    marker names, else the one its result file shows; None when pgc did not write it or it cannot tell."""
    path = Path(path)
    try:
        info = json.loads((path / MARKER_FILE).read_text()) if (path / MARKER_FILE).is_file() else {}
    except (OSError, ValueError):
        info = {}
    command = info.get("command") if isinstance(info, dict) else None
    if isinstance(command, str) and command.split():
        return command.split()[0]
    return _legacy_command(path)


def _legacy_command(path: Path) -> str | None:
    for name, (key, prefix, command) in _LEGACY_SIGNATURES.items():
        f = path / name
        try:
            if f.is_file() and not f.is_symlink() and f.stat().st_size < 64 * 2**20:
                value = json.loads(f.read_text()).get(key)
                if isinstance(value, str) and value.startswith(prefix):
                    return command
        except (OSError, ValueError, AttributeError):
            continue
    return None


def _probe_writable(folder: Path) -> None:
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".pgc-write-test.")
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise OutputDirError(f"cannot write to {folder}: {exc.strerror or exc}") from None


def check_output_dir(
    path: str | Path, *, force: bool = False, update: bool = False, command: str | None = None
) -> Path:
    """Refuse an output folder pgc must not write; return it as given.

    Always refused: the working folder or any folder containing it, the home folder or any folder
    containing it, a filesystem root or mount point, a symbolic link, an existing non-folder, and a
    location that cannot be written (probed by creating and removing a file, so read-only file
    systems are caught too). Then, for an existing non-empty folder:

    * ``update=True`` (commands that add files to their folder: ``pgc tune`` resuming its study,
      ``pgc replicate --search``): allowed only if pgc wrote it (:func:`is_pgc_output`);
    * ``force=True`` (the folder will be replaced): allowed only if pgc wrote it;
    * otherwise refused ("exists and is not empty").

    ``command`` (``train``, ``report``, ...): a folder is replaced or added to only if that command wrote
    it (:func:`output_command`), so ``pgc report --force`` never writes over a training run.

    Raises :class:`OutputDirError` (a ``ValueError``) with a one-line message.
    """
    given = Path(path)
    out = Path(os.path.abspath(given))
    real = out.resolve()
    danger = []
    for label, ref in (("the working folder", Path.cwd()), ("the home folder", Path.home())):
        for candidate in {ref, ref.resolve()}:
            if _is_ancestor_or_same(real, candidate) or _is_ancestor_or_same(out, candidate):
                danger.append(label if real == candidate.resolve() else f"a folder containing {label}")
    if real.parent == real or (real.is_dir() and os.path.ismount(real)):
        danger.append("a filesystem root or mount point")
    if danger:
        raise OutputDirError(f"refusing to use {given} as output folder: it is {danger[0]}")
    if given.is_symlink():
        raise OutputDirError(f"output folder {given} is a symbolic link; give the folder itself")
    if given.exists() and not given.is_dir():
        raise OutputDirError(f"{given} exists and is not a folder")
    anchor = out.parent
    while not anchor.exists():
        anchor = anchor.parent
    if not anchor.is_dir():
        raise OutputDirError(f"cannot create {given}: {anchor} is not a folder")
    _probe_writable(anchor)
    if given.is_dir():
        try:
            nonempty = any(given.iterdir())
        except OSError as exc:
            raise OutputDirError(f"cannot read {given}: {exc.strerror or exc}") from None
        if nonempty:
            _check_replaceable(given, force=force, update=update, command=command)
        if update:
            _probe_writable(given)
    return given


def _check_replaceable(given: Path, *, force: bool, update: bool, command: str | None) -> None:
    """A non-empty output folder: replaced (``force``) or added to (``update``) only if pgc's ``command``
    wrote it; the error says why not, and suggests ``--force`` only where it would help."""
    action = "replace" if force or not update else "write into"
    if not is_pgc_output(given):
        if not (force or update):
            raise OutputExistsError(
                f"{given} exists and is not empty (and was not written by pgc); choose another output folder"
            )
        raise OutputDirError(
            f"{given} is not empty and was not written by pgc (no {MARKER_FILE} marker); refusing to {action} it"
        )
    found = output_command(given) if command is not None else None
    if found != command:
        raise OutputDirError(
            f"{given} was written by {'pgc ' + found if found else 'pgc (command unknown)'}, not "
            f"pgc {command}; refusing to {action} it (choose another output folder)"
        )
    if not (force or update):
        raise OutputExistsError(f"{given} exists and is not empty (use --force to replace it)")


def write_marker(folder: str | Path, **info) -> Path:
    """Mark ``folder`` as written by pgc (what :func:`is_pgc_output` and ``--force`` look for)."""
    path = Path(folder) / MARKER_FILE
    if not path.is_file():
        path.write_text(json.dumps({"format": "pgc-output/1", "written_by": "pgc", **json_safe(info)}) + "\n")
    return path


_HELD_LOCKS: dict[str, list] = {}  # lock path -> [fd, depth]: the locks this process holds


def lock_path(target: str | Path) -> Path:
    """The lock file of an output folder: ``<target>.lock`` beside it."""
    target = Path(os.path.abspath(target))
    return target.with_name(target.name + ".lock")


def _forget_locks_in_forked_child() -> None:
    """A forked child (a process pool's worker) must not keep its parent's output locks alive: an flock
    belongs to the open file, and the child's copy of the descriptor would hold it after the parent dies,
    so a killed writer's orphaned workers would block the next writer. The child closes its copies."""
    for held in list(_HELD_LOCKS.values()):
        if held[0] is not None:
            with contextlib.suppress(OSError):
                os.close(held[0])
    _HELD_LOCKS.clear()


os.register_at_fork(after_in_child=_forget_locks_in_forked_child)


@contextmanager
def output_lock(target: str | Path) -> Iterator[Path]:
    """Hold the exclusive OS lock (``fcntl.flock``) of the output folder ``target`` for the block.

    The lock file is ``<target>.lock`` beside the folder; it is removed on release. A second process
    asking for the same lock gets :class:`OutputBusyError` at once (no waiting): of two writers of one
    folder exactly one proceeds. Re-entrant within a process (nested calls share one lock); the lock
    dies with the process, so a killed writer never blocks the next one.
    """
    path = lock_path(target)
    key = str(path)
    held = _HELD_LOCKS.get(key)
    if held is not None and held[0] is not None:
        held[1] += 1
        try:
            yield path
        finally:
            held[1] -= 1
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputDirError(f"cannot create {path.parent}: {exc.strerror or exc}") from None
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputDirError(f"cannot create the lock file {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputBusyError(
                f"{Path(target)} is being written by another process "
                f"(lock {path} is held); try again when it has finished"
            ) from None
        try:  # the previous holder removes the file on release: make sure ours is still the file there
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    _HELD_LOCKS[key] = [fd, 1]
    try:
        yield path
    finally:
        del _HELD_LOCKS[key]
        with contextlib.suppress(OSError):
            os.unlink(path)  # still holding the lock: a waiter that opened the old file retries
        os.close(fd)


_STALE = re.compile(r"\.pgc-(\d+)-[^.]+\.(partial|old)$")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_partials(target: str | Path) -> list[Path]:
    """Remove the leftovers of killed writers of ``target``: ``<name>.pgc-<pid>-*.partial`` (a folder
    being built) and ``<name>.pgc-<pid>-*.old`` (the previous folder moved aside) whose writer process
    is gone. Call it while holding :func:`output_lock`. A moved-aside old folder is put back when
    ``target`` itself is missing (the writer died between the two renames). Returns what was removed."""
    target = Path(os.path.abspath(target))
    removed = []
    try:
        siblings = list(target.parent.iterdir())
    except OSError:
        return removed
    for p in sorted(siblings):
        if not p.name.startswith(target.name + "."):
            continue
        m = _STALE.fullmatch(p.name[len(target.name) :])
        if not m or _pid_alive(int(m.group(1))) or p.is_symlink() or not p.is_dir():
            continue
        if m.group(2) == "old" and not os.path.lexists(target):
            with contextlib.suppress(OSError):
                os.rename(p, target)
                continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    if sys.platform != "linux":
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd = -100
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _folder_mode() -> int:
    """The permissions of a folder ``mkdir`` would create (0777 & ~umask); ``mkdtemp`` gives 0700."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


@contextmanager
def replace_directory_atomically(target: str | Path, command: str | None = None) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it replaces ``target``, on any
    error it is deleted, so readers never see a half-written folder.

    Safe under concurrency and kills: the whole block holds :func:`output_lock` (a second writer gets
    :class:`OutputBusyError`); an existing ``target`` is replaced only if :func:`check_output_dir`
    allows it with ``force`` (pgc wrote it, not the working/home folder...); the temporary folder is
    named ``<name>.pgc-<pid>-<random>.partial`` and the leftovers of killed writers are removed
    first (:func:`remove_stale_partials`). The replacement keeps the old folder until the new one is
    in place: an atomic swap (``renameat2``), or else old renamed aside, new renamed in, old deleted.
    A kill at any moment leaves ``target`` complete (old or new), or, in the fallback's window
    between two renames, missing with the old folder restored by the next writer.
    The new folder gets the :data:`MARKER_FILE` naming ``command`` (which alone may replace it later; see
    :func:`check_output_dir`) and the permissions of a folder ``mkdir`` would make.
    """
    target = Path(target)
    with output_lock(target):
        remove_stale_partials(target)
        check_output_dir(target, force=True, command=command)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{target.name}.pgc-{os.getpid()}-", suffix=".partial", dir=target.parent))
        try:
            yield tmp
            write_marker(tmp, **({"command": command} if command else {}))
            raise_if_interrupted()
            os.chmod(tmp, _folder_mode())
            check_output_dir(target, force=True, command=command)  # unchanged by anyone while we worked?
            if not os.path.lexists(target):
                os.rename(tmp, target)
            elif _exchange(tmp, target):
                shutil.rmtree(tmp, ignore_errors=True)  # now the old folder
            else:
                aside = Path(
                    tempfile.mkdtemp(prefix=f"{target.name}.pgc-{os.getpid()}-", suffix=".old", dir=target.parent)
                )
                os.rename(target, aside)  # replaces the empty placeholder
                os.rename(tmp, target)
                shutil.rmtree(aside, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
