"""Thin CLI: parse, call the library, render. Each module registers its commands."""

from acx_oci.cli import (  # noqa: F401  (imported for their @main.command side effects)
    agentcard_cmd,
    attest_cmd,
    benchmark_cmd,
    cartridge_cmd,
    copy_cmd,
    demo_cmd,
    doctor_cmd,
    env_cmd,
    exam_cmd,
    keys_cmd,
    log_cmd,
    policy_cmd,
    referrers_cmd,
    revoke_cmd,
    sandbox_cmd,
    transcripts_cmd,
    vc_cmd,
)
from acx_oci.cli.main import main

__all__ = ["main"]
