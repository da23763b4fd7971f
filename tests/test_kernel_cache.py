"""numba's on-disk cache follows each module's own file: it must not keep kernels built on old code.

numba keys a module's cached kernels to that file's time and size; a compiled function it calls from
another module is built into them, and a change there alone leaves them stale (the same command, other
bits). So each module whose kernels call another module's carries a digest of those functions' source
and of the constants they read, and this test holds it to them: a change there then changes the module
too, and numba compiles it anew.
"""

import hashlib
import inspect
import sys

import numba
import numpy as np
import pytest

import agents.kernels
import cloudsim.engine.compiled


def called_elsewhere(module) -> dict[str, str]:
    """The source of every compiled function ``module``'s kernels reach in other modules, by qualified name:
    those it imports, and the compiled functions they call in turn; and the value of every constant those
    functions read from their module (numba builds a global's value into the kernel as a constant)."""
    found: dict[str, str] = {}
    todo = [value for value in vars(module).values()
            if isinstance(value, numba.core.registry.CPUDispatcher) and value.py_func.__module__ != module.__name__]
    while todo:
        function = todo.pop().py_func
        name = f"{function.__module__}.{function.__qualname__}"
        if name in found:
            continue
        found[name] = inspect.getsource(function)
        names, codes = set(), [function.__code__]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes += [c for c in code.co_consts if inspect.iscode(c)]
        space = vars(sys.modules[function.__module__])
        todo += [space[n] for n in names if isinstance(space.get(n), numba.core.registry.CPUDispatcher)]
        found.update({f"{function.__module__}.{n}": constant(space[n]) for n in names
                      if isinstance(space.get(n), (int, float, np.generic, tuple, np.ndarray))})
    return found


def constant(value) -> str:
    """A global's value as the digest reads it, the same text under every numpy version: an array by its bytes
    (its repr elides the middle of a long one), a numpy scalar by its type and value."""
    if isinstance(value, np.ndarray):
        return repr((value.dtype.str, value.shape, value.tobytes()))
    if isinstance(value, np.generic):
        return repr((value.dtype.str, value.item()))
    if isinstance(value, tuple):
        return f"({', '.join(constant(item) for item in value)})"
    return repr(value)


def digest(module) -> str:
    sources = called_elsewhere(module)
    return hashlib.sha256("".join(f"{name}\n{sources[name]}" for name in sorted(sources)).encode()).hexdigest()[:16]


@pytest.mark.parametrize("module", [cloudsim.engine.compiled, agents.kernels], ids=lambda m: m.__name__)
def test_a_module_of_kernels_carries_the_digest_of_the_kernels_it_calls_elsewhere(module):
    expected = digest(module)
    assert module.KERNELS_CALLED == expected, (
        f"{module.__name__}: compiled functions it calls from other modules changed "
        f"({', '.join(sorted(called_elsewhere(module)))}); set KERNELS_CALLED = {expected!r} in "
        f"{module.__file__}, so that numba's cache compiles its kernels anew")


def test_the_digest_covers_what_the_kernels_call_in_turn():
    # compiled.py imports tanh1, which calls exp1; agents.kernels imports mlp, which calls tanh1. draw_below
    # calls _next64, which reads PCG64's multiplier, a constant of cloudsim.engine.kernels.
    assert {"cloudsim.engine.kernels.pair_score", "cloudsim.engine.kernels.tanh1", "cloudsim.engine.kernels.exp1",
            "cloudsim.engine.kernels._next64", "cloudsim.engine.kernels._PCG_MULTIPLIER"} <= set(
        called_elsewhere(cloudsim.engine.compiled))
    assert "cloudsim.engine.kernels.exp1" in called_elsewhere(agents.kernels)
