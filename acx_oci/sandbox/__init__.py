"""Run untrusted agent code and graders in a bubblewrap sandbox, and prove the containment per run.

What it stops: reading host files outside the read-only system root and the explicit binds (keys, state,
home, host /tmp); seeing or signalling host processes (fresh pid namespace and /proc); any network, loopback
included (empty network namespace); writing anywhere but the rw binds and a size-capped tmpfs /tmp; running
as root or as the verifier (unprivileged uid inside, and an unprivileged host uid when the verifier is root);
capabilities and nested user namespaces; outliving the run (wall-clock SIGKILL of the whole pid namespace);
runaway CPU, memory (address space), processes, open files and file size (rlimits).

What it does NOT stop: kernel exploits (the kernel is shared; user namespaces widen its attack surface, and no
seccomp filter is installed); CPU and cache side channels; denial of service the rlimits do not cover (the
rw workspace is bounded per file, not in total; RLIMIT_NPROC is per host uid: a root verifier gives each grade,
game and proof its own (:func:`own_uid`), an unprivileged one shares its own uid's budget with them);
anything a hostile program does to a process of the same sandbox uid (see :mod:`.grader`).

Example::

    from acx_oci.sandbox import SandboxSpec, run

    result = run(SandboxSpec(time_seconds=10), ["/bin/echo", "hi"])
    assert result.returncode == 0 and result.stdout.strip() == b"hi"
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.errors import SandboxError, SandboxUnavailable
    from acx_oci.sandbox.bwrap import (
        INSIDE_UID,
        SandboxResult,
        SandboxSpec,
        abandon_runs,
        build_argv,
        bwrap_version,
        drops_privilege,
        find_bwrap,
        give_to_sandbox,
        inside_uid,
        run,
        staging_dir,
    )
    from acx_oci.sandbox.capture import MAX_CAPTURE
    from acx_oci.sandbox.grader import (
        GameOutcome,
        GradeResult,
        TestOutcome,
        copy_tree,
        game_outcome,
        grade,
        parse_junit,
    )
    from acx_oci.sandbox.graderboot import GRADER_CONFIG, pytest_argv
    from acx_oci.sandbox.modelprobes import PREFIX, model_verdicts, run_model_probes
    from acx_oci.sandbox.probes import check
    from acx_oci.sandbox.relay import relay_argv
    from acx_oci.sandbox.tree import remove_tree, tree_digest, write_files
    from acx_oci.sandbox.uids import own_uid
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "acx_oci.errors": ("SandboxError", "SandboxUnavailable"),
        "bwrap": ("INSIDE_UID", "SandboxResult", "SandboxSpec", "abandon_runs", "build_argv", "bwrap_version",
            "drops_privilege", "find_bwrap", "give_to_sandbox", "inside_uid", "run", "staging_dir"),
        "capture": ("MAX_CAPTURE",),
        "grader": ("GameOutcome", "GradeResult", "TestOutcome", "copy_tree", "game_outcome", "grade", "parse_junit"),
        "graderboot": ("GRADER_CONFIG", "pytest_argv"),
        "modelprobes": ("PREFIX", "model_verdicts", "run_model_probes"),
        "probes": ("check",),
        "relay": ("relay_argv",),
        "tree": ("remove_tree", "tree_digest", "write_files"),
        "uids": ("own_uid",),
    })

__all__ = ["GRADER_CONFIG", "INSIDE_UID", "MAX_CAPTURE", "PREFIX", "GameOutcome", "GradeResult", "SandboxError",
           "SandboxResult", "SandboxSpec", "SandboxUnavailable", "TestOutcome", "abandon_runs", "build_argv",
           "bwrap_version", "check", "copy_tree", "drops_privilege", "find_bwrap", "game_outcome", "give_to_sandbox",
           "grade", "inside_uid", "model_verdicts", "own_uid", "parse_junit", "pytest_argv", "relay_argv",
           "remove_tree", "run", "run_model_probes", "staging_dir", "tree_digest", "write_files"]
