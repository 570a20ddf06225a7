"""numba's ``njit``, imported when a kernel first runs: a process that runs none never imports numba.

Importing numba costs a process ~0.3 s, and loading its first cached kernel ~0.3 s more (its
CPU target's registries), more than a short command's whole work: ``fuseki search --moves
"Q16 D4"`` plays two moves on one board and reads one row of the built-in book (issue 42).

``njit(**options)`` makes a ``Kernel`` where ``numba.njit(**options)`` made a dispatcher.  At
the first call that needs machine code, every kernel of the module is handed to
``numba.njit(**options)`` (numba's on-disk cache works as before) and the dispatchers take the
kernels' places in the module's namespace: kernels calling kernels compile together, and a
caller reading the module's attribute (``K.play``) calls numba's dispatcher itself from then on
(one imported by name, ``from ... import kernel``, goes through its ``Kernel``).

``python_first=True`` marks a kernel cheap enough to run as the Python it is written in (the
rules core's per-move kernels): until its module's kernels have made ``PYTHON_CALLS`` such calls,
they run interpreted, with the same results (tests/test_lazy_jit.py plays seeded random games
both ways), and numba is not imported; any other kernel of the module, or the next call after
that budget, compiles the module.  A process that has imported numba already compiles at its
first call (the cost is paid).  ``NUMBA_DISABLE_JIT=1`` still gives numba's plain Python.
"""

from __future__ import annotations

import functools
import sys
import threading

# Interpreted calls of a module's python_first kernels (helpers included: a move of the rules
# core is 7-10 calls) before it compiles: some 250 moves, under 0.1 s interpreted, against ~0.6 s
# of numba's start; a process that plays more (an engine, an import) compiles then.
PYTHON_CALLS = 2_000

_lock = threading.Lock()


class _Module:
    """The kernels of one module and where they stand."""

    def __init__(self) -> None:
        self.kernels: list[Kernel] = []
        self.python_calls = PYTHON_CALLS
        self.compiled = False


_modules: dict[str, _Module] = {}


class Kernel:
    """A function of a kernel module before numba compiles it (see the module's docstring)."""

    def __init__(self, func, options: dict, python_first: bool, module: _Module):
        functools.update_wrapper(self, func)
        self.py_func = func  # numba's dispatchers name it so too
        self.options = options
        self.python_first = python_first
        self._module = module

    def __call__(self, *args):
        module = self._module
        if not module.compiled:
            if self.python_first and module.python_calls > 0 and "numba" not in sys.modules:
                module.python_calls -= 1  # a budget, not a count that must be exact across threads
                return self.py_func(*args)
            compile_module(self.py_func.__module__)
        return self.py_func.__globals__[self.py_func.__name__](*args)


def njit(python_first: bool = False, **options):
    """The decorator: ``@njit(cache=True)`` as numba's; ``python_first`` as the module's docstring says."""
    def decorate(func) -> Kernel:
        module = _modules.setdefault(func.__module__, _Module())
        kernel = Kernel(func, options, python_first, module)
        module.kernels.append(kernel)
        return kernel
    return decorate


def compile_module(name: str) -> None:
    """Put numba's dispatcher of every kernel of module ``name`` in its namespace (once)."""
    with _lock:
        module = _modules[name]
        if module.compiled:
            return
        import numba

        from fuseki.engine.core import numba_cache

        numba_cache.install()  # cached kernels load without numba's compiler registries
        for kernel in module.kernels:  # all before any compiles: a kernel's callees are looked up then
            kernel.py_func.__globals__[kernel.py_func.__name__] = numba.njit(**kernel.options)(kernel.py_func)
        module.compiled = True


def is_compiled(name: str) -> bool:
    """Whether module ``name``'s kernels are numba's dispatchers now."""
    module = _modules.get(name)
    return bool(module and module.compiled)
