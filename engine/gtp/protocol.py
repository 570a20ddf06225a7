"""GTP v2 framing: preprocessing, parsing, the command registry and responses.

This module knows the protocol and nothing of Go.  A line goes through:

1. preprocessing (GTP 2 draft 2, section 3.1): control characters other than
   HT and LF are dropped, everything from ``#`` on is a comment, HT becomes a
   space; a line that is then blank gets no response at all;
2. parsing (section 3.2): an optional numeric id (ASCII digits), the command
   name (case-sensitive, as in GNU Go), then space-separated arguments;
3. dispatch to the handler registered under that name;
4. framing (section 3.4): ``=id text`` or ``?id message``, ended by one empty
   line.  Response text never contains an empty line (it would end the
   response early), so empty lines inside it are dropped.

``GtpEngine.dispatch`` is the one place where exceptions become ``?`` responses:
``GtpError`` carries a standard message, the board's ``IllegalMove`` becomes
``illegal move``, and anything else becomes ``internal error`` with the
traceback sent to the log (stderr), never to the controller.

Handlers are plain functions ``handler(game, args) -> str`` registered by
name; they never print.  A handler that sets ``game.streaming`` to an iterator of
entries (the analysis commands, ``lz-analyze`` and friends) leaves its ``=`` response
open: it is written without its closing empty line, and the next input line, of
whatever kind, first closes it (Leela Zero's and KataGo's convention: the
stream stops at the controller's next command); ``close_stream()`` gives the
closing text at the end of input.  The entries are one line after the ``=``.  Where
the loop reads its next line on a thread of its own (``engine.gtp.cli.serve`` sets
``streams_aside``), it takes the iterator (``take_stream``) and runs it beside that
read, so the engine answers the next command at once however long the entries take;
otherwise they are computed into the response.  Only the core's numpy-free ``base`` is imported here,
so that the engine answers its first command before numba is loaded.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Callable

from fuseki.engine.core.base import IllegalMove

Handler = Callable[[object, list[str]], str]

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_ID = re.compile(r"[0-9]+")


class GtpError(Exception):
    """A command failed; ``message`` is the text after ``?`` (GTP 2 section 6.3 wording)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Registry:
    """Handlers by command name, in registration order (the ``list_commands`` order)."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def command(self, name: str) -> Callable[[Handler], Handler]:
        """Decorator registering ``handler`` under ``name``; a name is registered once."""
        def register(handler: Handler) -> Handler:
            if name in self._handlers:
                raise ValueError(f"GTP command {name!r} registered twice")
            self._handlers[name] = handler
            return handler
        return register

    def get(self, name: str) -> Handler | None:
        return self._handlers.get(name)

    def names(self) -> list[str]:
        return list(self._handlers)

    def __contains__(self, name: str) -> bool:
        return name in self._handlers


def preprocess(line: str) -> str:
    """GTP 3.1 preprocessing of one input line (without its LF): see the module docstring.

    CR is a control character, so CR LF input needs no special case.
    """
    line = _CONTROL.sub("", line).split("#", 1)[0]
    return line.replace("\t", " ").strip(" ")


def split_command(line: str) -> tuple[str | None, str | None, list[str]]:
    """(id, name, args) of a preprocessed, non-blank line.

    Splits on SPACE only (``str.split()`` would also split on Unicode spaces
    such as NBSP); the id is ASCII digits only (``str.isdigit`` accepts
    superscripts).  ``name`` is None when the line holds an id alone.
    """
    words = [w for w in line.split(" ") if w]
    ident = None
    if words and _ID.fullmatch(words[0]):
        ident = words.pop(0)
    if not words:
        return ident, None, []
    return ident, words[0], words[1:]


def format_response(ok: bool, ident: str | None, text: str) -> str:
    """``=id text`` / ``?id text`` ended by one empty line (GTP 3.4).

    An empty first line of ``text`` puts a multi-line answer (a diagram) on
    the lines after ``=``.
    """
    lines = [ln.rstrip() for ln in text.replace("\r", "").split("\n")]
    head = ("=" if ok else "?") + (ident or "")
    first = f"{head} {lines[0]}" if lines[0] else head
    return "\n".join([first] + [ln for ln in lines[1:] if ln.strip()]) + "\n\n"


class GtpEngine:
    """Answers GTP lines for one game state.

    ``game`` is whatever the handlers take as first argument (see
    ``engine.gtp.commands.state.Game``); ``game.quit`` set to True by a handler ends
    the session after its response.  ``log`` receives diagnostics (one string a
    call) and defaults to stderr.
    """

    def __init__(self, game, registry: Registry, log: Callable[[str], None] | None = None):
        self.game = game
        self.registry = registry
        self.log = log or _stderr_log
        self.stream_open = False  # an analysis response waits for the next line to end it
        self.streams_aside = False  # True: the caller runs an open response's entries (take_stream)
        self._stream = None
        game.command_names = registry.names()

    @property
    def finished(self) -> bool:
        """True once ``quit`` has been answered."""
        return bool(self.game.quit)

    def handle_line(self, line: str) -> str | None:
        """The full response to one input line, or None for a blank or comment line.

        Any line first ends an open analysis response (see the module docstring)."""
        closing = self.close_stream()
        line = preprocess(line)
        if not line:
            return closing or None
        ident, name, args = split_command(line)
        if name is None:
            return closing + format_response(False, ident, "unknown command")
        return closing + self.dispatch(ident, name, args)

    def close_stream(self) -> str:
        """The empty line ending an open analysis response, or "" when none is open."""
        closing, self.stream_open = ("\n" if self.stream_open else ""), False
        return closing

    def handle_bytes(self, raw: bytes) -> str | None:
        """``handle_line`` for raw input: invalid UTF-8 becomes U+FFFD, never an exception."""
        return self.handle_line(raw.decode("utf-8", errors="replace"))

    def reject_line(self, head: str, message: str) -> str | None:
        """A ``?`` response to a line not run at all (e.g. too long), echoing its id if any."""
        head = preprocess(head)
        if not head:
            return None
        ident, _, _ = split_command(head)
        return format_response(False, ident, message)

    def dispatch(self, ident: str | None, name: str, args: list[str]) -> str:
        """Run one command; the one place where exceptions become ``?`` responses."""
        handler = self.registry.get(name)
        if handler is None:
            return format_response(False, ident, "unknown command")
        self.game.streaming = None
        try:
            text = handler(self.game, args) or ""
            entries, self.game.streaming = self.game.streaming, None
            if entries is not None and not self.streams_aside:
                line = " ".join(entries)  # computed here: nobody runs them aside
                text, entries = (f"{text}\n{line}" if line else text), iter(())
        except GtpError as exc:
            return format_response(False, ident, exc.message)
        except IllegalMove:
            return format_response(False, ident, "illegal move")
        except Exception as exc:  # noqa: BLE001 - no input may crash the engine
            self.log(f"fuseki: internal error in {name}: "
                     + "".join(traceback.format_exception(exc)).rstrip())
            return format_response(False, ident, "internal error")
        if entries is None:
            return format_response(True, ident, text)
        self._stream, self.stream_open = (entries if self.streams_aside else None), True
        return format_response(True, ident, text)[:-1]  # left open: the next line ends it

    def take_stream(self):
        """The entries of the response just left open, to run aside (once), or None."""
        stream, self._stream = self._stream, None
        return stream


def _stderr_log(text: str) -> None:
    # Diagnostics must never look like a response: indent lines starting with '=', '?' or 'info'.
    for line in text.splitlines():
        if line[:1] in ("=", "?") or line.startswith("info"):
            line = " " + line
        print(line, file=sys.stderr, flush=True)
