"""A small GTP v2 client for an engine run as a subprocess (GTP 2 draft 2, sections 3 and 4).

``GtpClient(command)`` starts ``command`` (split like a shell would, no shell
run) in its own process group, so that ``close`` can kill it with anything it
started.  ``send(line)`` writes one command and returns the text of a ``=``
response; every way that can go wrong is a subclass of ``GtpClientError``:

- ``GtpFailure``: the engine answered ``?`` (``.message`` is its text); the
  client stays usable.
- ``GtpTimeout``: no complete response in time.
- ``GtpGarbage``: the output is not a GTP response (no ``=``/``?`` first).
- ``EngineDead``: the process exited, could not start, or closed its stdin.

After a timeout or garbage the stream can no longer be trusted to pair
answers with commands, so the client marks itself ``broken`` and every later
``send`` raises ``EngineDead`` at once.  Its stdout and stderr are read by
daemon threads, so a chatty engine never blocks on a full pipe; the last
``STDERR_KEEP`` stderr lines are kept (``stderr_lines``, ``take_stderr``).

Deliberately no Go knowledge here: vertices, colours and boards belong to the
callers (``engine.players.external``, ``engine.players.match``).  ``kill_group`` is also
KataGo's client's (``book.analysis.katago``: the book may import this module for it).
"""

from __future__ import annotations

import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections import deque

STDERR_KEEP = 2000  # lines of the engine's stderr kept in memory
LINE_LIMIT = 1 << 20  # bytes of one output line read at a time
# Bytes of one response: no GTP answer comes near (a printsgf of a 2,500-move game is 20 KB); an
# engine answering "= x" then endless 1 MB lines grew this process to 2.8 GB in 30 s.
RESPONSE_LIMIT = 16 << 20
QUEUED = 32  # pieces of output (each at most LINE_LIMIT) read ahead of the responses asked for
EXTRA_PATH = ("/usr/games", "/usr/local/games")  # Debian puts gnugo there, outside PATH


class GtpClientError(Exception):
    """Anything that went wrong talking to the engine."""


class GtpFailure(GtpClientError):
    """The engine answered ``?``; ``message`` is the text after it."""

    def __init__(self, command: str, message: str):
        super().__init__(f"'{command}' failed: {message}")
        self.command = command
        self.message = message


class GtpTimeout(GtpClientError):
    """No complete response within the time allowed."""


class GtpGarbage(GtpClientError):
    """Output that is not a GTP response."""


class EngineDead(GtpClientError):
    """The engine is not running (never started, exited, or was given up on)."""


def split_command(command: str | list[str]) -> list[str]:
    """``command`` as an argv list, the program looked up in PATH and then ``EXTRA_PATH``.

    Raises EngineDead when the line is empty or cannot be split (unbalanced quotes).
    """
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as exc:
        raise EngineDead(f"cannot parse engine command {command!r}: {exc}") from None
    if not argv:
        raise EngineDead("empty engine command")
    if os.sep not in argv[0]:
        found = shutil.which(argv[0]) or shutil.which(argv[0], path=os.pathsep.join(EXTRA_PATH))
        if found:
            argv[0] = found
    return argv


class GtpClient:
    """One engine subprocess spoken to in GTP; see the module docstring.

    ``timeout`` (seconds) is the default wait for a response; ``send`` takes
    another per call.  Raises EngineDead when the program cannot be started.
    """

    def __init__(self, command: str | list[str], timeout: float = 30.0, cwd: str | None = None,
                 env: dict | None = None):
        self.command = command if isinstance(command, str) else shlex.join(command)
        self.timeout = timeout
        self.broken: str | None = None  # why the client gave up, or None
        self._commands: list[str] | None = None
        self._stdout: queue.Queue = queue.Queue(QUEUED)  # bounded: an engine that writes on waits
        self._stderr: deque[str] = deque(maxlen=STDERR_KEEP)
        self._stderr_count = 0  # lines ever read, so callers can ask for what is new
        self._stderr_lock = threading.Lock()
        try:
            self.proc = subprocess.Popen(
                split_command(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)
        except OSError as exc:
            raise EngineDead(f"cannot start {self.command!r}: {exc.strerror or exc}") from None
        threading.Thread(target=self._read_stdout, daemon=True, name="gtp-stdout").start()
        threading.Thread(target=self._read_stderr, daemon=True, name="gtp-stderr").start()

    # --- reader threads ----------------------------------------------------------------

    def _read_stdout(self) -> None:
        try:
            for raw in iter(lambda: self.proc.stdout.readline(LINE_LIMIT), b""):
                if not self._put(raw):  # a longer line arrives in pieces: garbage, not a full memory
                    return
        except (OSError, ValueError):
            pass
        self._put(None)  # end of output

    def _put(self, item) -> bool:
        """Queue ``item`` for _read_response, waiting while the queue is full; False once the
        client has given up (nobody will read it)."""
        while self.broken is None:
            try:
                self._stdout.put(item, timeout=1.0)
                return True
            except queue.Full:
                continue
        return False

    def _read_stderr(self) -> None:
        try:
            for raw in iter(lambda: self.proc.stderr.readline(LINE_LIMIT), b""):
                with self._stderr_lock:
                    self._stderr.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
                    self._stderr_count += 1
        except (OSError, ValueError):
            pass

    # --- talking -------------------------------------------------------------------------

    def alive(self) -> bool:
        return self.broken is None and self.proc.poll() is None

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command line; the text of its ``=`` response (may be multi-line, stripped).

        Raises GtpFailure, GtpTimeout, GtpGarbage or EngineDead (module docstring).
        ``command`` must be one line (ValueError otherwise).
        """
        if "\n" in command or "\r" in command:
            raise ValueError("a GTP command is one line")
        if self.broken is not None:
            raise EngineDead(self.broken)
        try:
            self.proc.stdin.write(command.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise self._give_up(EngineDead, f"engine closed its input ({self._exit_text()})") from None
        ok, text = self._read_response(command, self.timeout if timeout is None else timeout)
        if not ok:
            raise GtpFailure(command, text)
        return text

    def _read_response(self, command: str, timeout: float) -> tuple[bool, str]:
        """(ok, text) of the next response: lines up to an empty line (GTP 3.4)."""
        deadline = time.monotonic() + timeout
        lines: list[str] = []
        size = 0
        while True:
            try:
                raw = self._stdout.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise self._give_up(GtpTimeout, f"no answer to '{command}' within {timeout:g}s") from None
            if raw is None:
                self._stdout.put_nowait(None)  # stays visible to later reads (the queue was just emptied of it)
                raise self._give_up(EngineDead, f"engine exited during '{command}' ({self._exit_text()})")
            size += len(raw)
            if size > RESPONSE_LIMIT:
                raise self._give_up(GtpGarbage, f"answer to '{command}' is longer than {RESPONSE_LIMIT} bytes")
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not lines:
                if not line.strip():
                    continue  # tolerated: stray empty lines between responses
                if line[0] not in "=?":
                    raise self._give_up(GtpGarbage, f"answer to '{command}' is not GTP: {line[:80]!r}")
                lines.append(line)
                continue
            if not line.strip():
                break
            lines.append(line)
        head = lines[0]
        ok = head[0] == "="
        rest = head[1:].lstrip("0123456789")  # the id, if we had sent one
        return ok, "\n".join([rest.strip()] + lines[1:]).strip()

    def _give_up(self, kind: type[GtpClientError], message: str) -> GtpClientError:
        self.broken = message
        return kind(message)

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"exit code {code}"

    # --- conveniences --------------------------------------------------------------------

    def list_commands(self, timeout: float | None = None) -> list[str]:
        """The engine's ``list_commands``, asked once ([] when it fails)."""
        if self._commands is None:
            try:
                self._commands = self.send("list_commands", timeout).split()
            except GtpFailure:
                self._commands = []
        return self._commands

    def knows(self, name: str) -> bool:
        return name in self.list_commands()

    def identity(self, timeout: float | None = None) -> tuple[str, str]:
        """(name, version) as the engine tells them; '' for what it does not answer."""
        out = []
        for cmd in ("name", "version"):
            try:
                out.append(" ".join(self.send(cmd, timeout).split()))
            except GtpFailure:
                out.append("")
        return out[0], out[1]

    def stderr_lines(self) -> list[str]:
        """The last ``STDERR_KEEP`` lines the engine wrote to stderr."""
        with self._stderr_lock:
            return list(self._stderr)

    def stderr_mark(self) -> int:
        """A position in the stderr stream, for ``take_stderr``."""
        with self._stderr_lock:
            return self._stderr_count

    def take_stderr(self, mark: int) -> list[str]:
        """Stderr lines written since ``mark`` (as many as are still kept)."""
        with self._stderr_lock:
            new = self._stderr_count - mark
            return list(self._stderr)[-new:] if new > 0 else []

    def close(self, timeout: float = 2.0) -> None:
        """``quit``, then kill the process group if it has not exited within ``timeout``."""
        if self.proc.poll() is None and self.broken is None:
            try:
                self.send("quit", timeout=timeout)
            except GtpClientError:
                pass
        if self.broken is not None:  # hung or babbling: no point waiting for it
            self.kill()
        self.broken = self.broken or "closed"
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def kill(self) -> None:
        """SIGKILL the engine's process group (what it started too) and reap it."""
        kill_group(self.proc, 5.0)

    def __enter__(self) -> GtpClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def kill_group(proc: subprocess.Popen, wait: float) -> None:
    """SIGKILL the process group ``proc`` leads (what it started too) and reap ``proc``,
    waiting at most ``wait`` seconds; one already gone is no error."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        pass
