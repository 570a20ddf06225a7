"""numba's on-disk cache read without its compiler's registries: a process's first cached kernel
costs its machine code, not ~0.1-0.3 s of imports (issue 61: ``fuseki pattern``, bench/cli.py).

Before it loads a kernel from its cache, numba refreshes its CPU target
(``numba.core.caching.Cache.load_overload``): ``refresh`` imports and installs every typing and
lowering registry numba has (``numba.np.arraymath``, ``numba.cpython.unicode``, the random
generators, the typed containers, ~100 modules), the first time in a process.  Only the compiler
reads them: a cached kernel is machine code, linked against the C helpers numba registers when it
is imported and the runtime (NRT) that ``rtsys.initialize`` registers.  ``install()`` makes the
load initialise the runtime only.  Where the cache has no kernel for the call (a miss, or a stale
entry) numba compiles, and its compiler refreshes both contexts first
(``numba.core.compiler.CompilerBase``): a kernel that is compiled is compiled by a complete
context, in the same process as well.  A load that fails for any other reason is made again
numba's own way; a numba without the parts this relies on is left as it is (``install`` returns
False).  ``FUSEKI_NUMBA_FULL_LOAD=1`` leaves numba as it is too (tests/test_numba_cache.py runs the
kernels both ways and compares them).
"""

from __future__ import annotations

import os
import threading

_lock = threading.Lock()
_installed: bool | None = None


def install() -> bool:
    """Make numba's cache loads initialise the runtime only (once a process); whether it is so."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = _install()
        return _installed


def _install() -> bool:
    if os.environ.get("FUSEKI_NUMBA_FULL_LOAD", "") not in ("", "0"):
        return False
    try:
        from numba.core import caching
        from numba.core.runtime import rtsys
    except ImportError:
        return False
    cache = caching.Cache
    if not all(hasattr(cache, name) for name in ("load_overload", "_load_overload",
                                                 "_guard_against_spurious_io_errors")):
        return False
    full_load = cache.load_overload

    def load_overload(self, sig, target_context):
        """numba's ``Cache.load_overload`` less ``target_context.refresh()`` (see the module docstring)."""
        try:
            rtsys.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 - numba's own way, which raises what it raises
            return full_load(self, sig, target_context)

    load_overload.fuseki_full_load = full_load
    cache.load_overload = load_overload
    return True
