"""Grader helper: call the submission in a separate, isolated Python process.

The submission never runs inside the pytest process, so it cannot patch the
test runner; it runs with -I (no PYTHONPATH, no user site, no cwd on sys.path)
in a copy of the submitted workspace.

Where the kernel has Landlock (Linux >= 5.13), the child is confined before it
runs: no access at all beneath /grader (the hidden tests, i.e. the answer key)
or /grader-out (the junit report), and no ptrace or /proc/<pid>/{environ,mem}
of the pytest process. Without Landlock the child runs unconfined and can read
the answer key; exam certification's attack suite then finds that exploit and
refuses to certify the exam.
"""

import ctypes
import json
import os
import stat
import subprocess

_SYS_CREATE, _SYS_ADD, _SYS_RESTRICT = 444, 445, 446  # landlock_* syscalls (x86_64 and aarch64 alike)
_FS_ALL = (1 << 13) - 1  # Landlock ABI 1 filesystem rights
_FS_FILE = 1 | 2 | 4  # execute, write_file, read_file: the rights a non-directory may carry
_HIDDEN_ROOTS = ("grader", "grader-out")


class _Beneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))


def _confine():
    """preexec: allow every top-level directory except /grader and /grader-out; exit 97 if that fails."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    attr = ctypes.c_uint64(_FS_ALL)
    rfd = libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if rfd < 0:
        os._exit(97)
    for name in os.listdir("/"):
        if name in _HIDDEN_ROOTS:
            continue
        try:
            fd = os.open("/" + name, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        allowed = _FS_ALL if stat.S_ISDIR(os.fstat(fd).st_mode) else _FS_FILE
        rule = _Beneath(allowed, fd)
        if libc.syscall(_SYS_ADD, ctypes.c_int(rfd), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            os._exit(97)
        os.close(fd)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, required by landlock_restrict_self
        os._exit(97)
    if libc.syscall(_SYS_RESTRICT, ctypes.c_int(rfd), ctypes.c_uint32(0)) != 0:
        os._exit(97)
    os.close(rfd)


_CONFINE = _confine if landlock_abi() >= 1 else None

DRIVER = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("solution", "solution.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
req = json.loads(sys.stdin.read())
out = []
for args in req["calls"]:
    try:
        out.append({"ok": getattr(mod, req["func"])(*args)})
    except Exception as exc:
        out.append({"raised": type(exc).__name__})
sys.stdout.write("\n@@ACX-RESULT@@" + json.dumps(out))
"""


def call_many(func, calls, timeout=10):
    """[{"ok": value} | {"raised": name}] per call, or an AssertionError when the run breaks."""
    proc = subprocess.run([os.environ.get("ACX_PYTHON", "python3"), "-I", "-B", "-c", DRIVER],
                          cwd=os.environ["ACX_SUBMISSION"], input=json.dumps({"func": func, "calls": calls}),
                          capture_output=True, text=True, timeout=timeout, preexec_fn=_CONFINE)
    marker = proc.stdout.rfind("@@ACX-RESULT@@")
    assert proc.returncode == 0 and marker >= 0, f"submission failed: {proc.stderr[-500:]}"
    return json.loads(proc.stdout[marker + len("@@ACX-RESULT@@"):])
