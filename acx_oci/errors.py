"""One exception hierarchy, rendered once by the CLI.

Every error a user can cause maps to a subclass whose ``exit_code`` is the
process exit code documented in DESIGN.md: 1 verification/policy failure,
2 usage or bad input, 3 registry/network failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acx_oci.evaluation.policy import Verdict


class AcxError(Exception):
    """Base of every error acx-oci raises on purpose; the message is one line."""

    exit_code: int = 2


class UsageError(AcxError):
    """Bad input: malformed files, wrong arguments, unsupported media types."""

    exit_code = 2


class VerificationError(AcxError):
    """A signature, digest binding or policy did not hold."""

    exit_code = 1


class IntegrityError(VerificationError):
    """Downloaded or stored bytes do not match the digest that names them."""


class PolicyUnreadable(VerificationError):
    """A cartridge could not be loaded for policy evaluation: the policy fails closed.

    Carries the denying ``verdict`` (the gateway answers it ``403 DENIED``).
    """

    def __init__(self, message: str, verdict: Verdict) -> None:
        super().__init__(message)
        self.verdict = verdict


class RegistryError(AcxError):
    """The registry (or the network to it) failed or refused the request."""

    exit_code = 3


class NotFoundError(RegistryError):
    """A manifest, blob or tag does not exist in the store: the reference names nothing (bad input)."""

    exit_code = 2


class LocalNotFoundError(NotFoundError):
    """Not found in an OCI image layout on disk: a wrong path or tag is bad input, not a network failure."""

    exit_code = 2
