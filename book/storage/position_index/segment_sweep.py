"""What a stopped import left in a SQLite book's folder of segment files, removed at the next open.

An import's processes write a segment file (``book.storage.position_index.segment_files``) before the
importer lists it in the book; killed in between, they leave a file no row names (16 MB
for a batch, more for a merge).  The file's name starts with the pid of the process that
would link it (its owner): once that process is gone, nobody will.

- A writer's open (``sweep_book``) holds the book's write lock: no file is linked while it
  looks, so every unlisted file whose owner is gone goes.
- A reader's open (``sweep_dead``: ``fuseki serve``, ``fuseki search``) cannot take that
  lock.  It looks for unlisted files whose owner is gone, then reads the list again in a
  snapshot begun after it saw each owner gone: whatever an owner linked, it committed before
  it died, so that snapshot lists it, and only what it still does not list is removed.  A
  live import's files are never touched (their owner runs).  A reader that may not remove
  files (another user's book) leaves them, and says so once in the log.
"""

from __future__ import annotations

import logging
import os

from fuseki.book.storage.position_index.segment_files import book_folder, in_files, remove

_LOG = logging.getLogger(__name__)
_TOLD: set[str] = set()  # folders whose files this process may not remove, said once


def sweep_book(conn) -> list[str]:
    """``sweep`` the folder of a SQLite book on disk (none: nothing to do); ``conn`` holds the
    book's write lock."""
    folder = book_folder(conn)
    return sweep(folder, {segment.name for segment in in_files(conn)}) if folder else []


def sweep(folder: str, linked: set[str]) -> list[str]:
    """Remove the files no row names whose owner process is gone; returns their names.

    Call holding the book's write lock, so that no writer links a file meanwhile."""
    removed = []
    for name in _dead(folder, linked):
        remove(folder, [name])
        removed.append(name)
    return removed


def sweep_dead(db) -> list[str]:
    """For a reader of the book ``db`` (no write lock): remove the files no row names whose
    owner process is gone; returns their names.  Never raises for a file it may not remove."""
    with db.connect() as conn:
        folder = book_folder(conn)
        if not folder:
            return []
        listed = {segment.name for segment in in_files(conn)}  # an older snapshot: it only spares files
    dead = _dead(folder, listed)
    if not dead:
        return []
    with db.connect() as conn:  # a snapshot begun after every owner of ``dead`` was seen gone
        listed = {segment.name for segment in in_files(conn)}
    removed = []
    for name in dead:
        if name in listed:
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:
            continue
        except OSError as exc:
            if folder not in _TOLD:
                _TOLD.add(folder)
                _LOG.info("cannot remove what a stopped import left in %s: %s", folder, exc.strerror or exc)
            break
        removed.append(name)
    return removed


def _dead(folder: str, listed: set[str]) -> list[str]:
    """The files of ``folder`` not in ``listed`` whose owner process is gone."""
    try:
        found = os.listdir(folder)
    except OSError:  # no folder (no segment file yet), or one this process may not read
        return []
    return [name for name in sorted(found) if name not in listed and not owner_alive(os.path.join(folder, name))]


def owner_alive(path: str) -> bool:
    """Whether the process named at the start of the file's name (``PID-...``) may still link or
    rename it (``written_by_live``)."""
    owner = os.path.basename(path).split("-", 1)[0]
    return owner.isdigit() and written_by_live(int(owner), path)


def written_by_live(owner: int, path: str) -> bool:
    """Whether process ``owner``, which wrote the file ``path``, may still use it: it runs, and
    (where Linux says when it started) it started before the file was written -- a pid used
    again after a reboot or a wrap-around is another process."""
    if owner == os.getpid():
        return True
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    started = _start_time(owner)
    try:
        written = os.path.getmtime(path)
    except FileNotFoundError:
        return True  # removed meanwhile: nothing to do
    return started is None or started <= written + _START_SLACK


_START_SLACK = 2.0  # seconds: the boot time Linux gives is whole seconds


def _start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None where /proc does not say."""
    try:
        with open(f"/proc/{pid}/stat") as found:
            fields = found.read().rsplit(")", 1)[1].split()  # the name, in parentheses, may hold spaces
        with open("/proc/stat") as found:
            boot = next(int(line.split()[1]) for line in found if line.startswith("btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime, in clock ticks
    except (OSError, ValueError, IndexError, StopIteration):
        return None


