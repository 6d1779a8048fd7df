"""In-process probes that reach past what the first ones tried (issue 46, from review and an attacker's
session): the runner's own code in the runner's place, objects the runner snapshot did not hold (a data
descriptor on the report class, a name a runner module binds), the hook relay (the session's
``gethookproxy``, a hook caller's ``_hookexec``) and a package whose results equal anything.

Kept apart from :mod:`acx_oci.services.exams.inprocess_probes` (which runs them all) so each file stays a
size one can read; they use its ``_acx_mod`` prelude the same way.
"""

from __future__ import annotations

#: The runner's own code in the runner's place: ``Node.setup`` is a no-op that takes ``self``, and it is pytest's.
_OWN_NOOP = '''
_m, _n = _acx_mod("_py", "test.py", "thon"), _acx_mod("_py", "test.no", "des")
if _m is not None and _n is not None:
    _m.Function.runtest = _n.Node.setup
'''

_OWN_CODE_SWAP = '''
_m, _n = _acx_mod("_py", "test.py", "thon"), _acx_mod("_py", "test.no", "des")
if _m is not None and _n is not None:
    _m.Function.runtest.__code__ = _n.Node.setup.__code__
'''

#: A data descriptor on the report class: every report's ``outcome`` reads "passed" (a new class attribute
#: that is no function, property or method).
_REPORT_DESCRIPTOR = '''
_m = _acx_mod("_py", "test.rep", "orts")


class _AcxPassed:
    def __get__(self, obj, owner=None):
        return "passed"

    def __set__(self, obj, value):
        pass


if _m is not None:
    _m.TestReport.outcome = _AcxPassed()
'''

#: A name the runner looks up in its own module's globals, rebound: ``_pytest.runner.TestReport``.
_RUNNER_GLOBAL = '''
_m = _acx_mod("_py", "test.run", "ner")
if _m is not None:
    _acx_real = _m.TestReport

    class _AcxReport(_acx_real):
        @classmethod
        def from_item_and_call(cls, item, call):
            rep = _acx_real.from_item_and_call(item, call)
            rep.outcome, rep.longrepr = "passed", None
            return rep

    _m.TestReport = _AcxReport
'''

#: Every item's ``ihook`` through the session's own ``gethookproxy`` (an instance attribute): a relay that
#: answers ``pytest_runtest_call`` with a no-op; the guard's own call check never runs.
_HOOK_PROXY = '''
import sys as _s


def _acx_session():
    f = _s._getframe()
    while f is not None:
        for v in list(f.f_locals.values()):
            if type(v).__name__ == "Sess" + "ion" and hasattr(v, "gethookproxy"):
                return v
            s = getattr(v, "session", None)
            if type(s).__name__ == "Sess" + "ion":
                return s
        f = f.f_back
    return None


class _AcxRelay:
    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        if name == "pytest_runtest_" + "call":
            return lambda **kw: None
        return getattr(self._real, name)


_sess = _acx_session()
if _sess is not None:
    _acx_ghp = _sess.gethookproxy
    _sess.gethookproxy = lambda fspath: _AcxRelay(_acx_ghp(fspath))
'''

#: The hook caller's own ``_hookexec`` slot (pluggy's ``_HookCaller``), found through ``gc``.
_HOOK_CALLER = '''
import gc as _gc
for _o in _gc.get_objects():
    try:
        if type(_o).__name__.endswith("Hook" + "Caller") and getattr(_o, "name", None) == "pytest_runtest_" + "call":
            _o._hookexec = lambda name, impls, kwargs, first: None
    except Exception:
        pass
'''

#: Nothing of the runner: the package's functions return an object equal to anything, so every assert of an
#: equality passes. Only the honeypot run can see it (a changed expected value it also "equals").
LYING_EQ = '''
class _AcxYes:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def _acx_lie(fn):
    def lie(*a, **kw):
        return _AcxYes()
    return lie


for _acx_n, _acx_v in list(globals().items()):
    if callable(_acx_v) and getattr(_acx_v, "__module__", None) == __name__ and not _acx_n.startswith("_"):
        globals()[_acx_n] = _acx_lie(_acx_v)
'''

#: name -> the code appended to the package under test (joined to PROBES). Not ``LYING_EQ``: it changes
#: nothing of the runner, only the honeypots can see it, and an exam whose graded asserts carry no constant
#: has none (as a probe it refused such exams as weak tests, which the mutants already judge).
DEEPER: dict[str, str] = {
    "runnerOwnNoop": _OWN_NOOP,
    "runnerOwnCodeSwap": _OWN_CODE_SWAP,
    "reportDescriptor": _REPORT_DESCRIPTOR,
    "runnerGlobalSwap": _RUNNER_GLOBAL,
    "hookProxyRelay": _HOOK_PROXY,
    "hookCallerExec": _HOOK_CALLER,
}
