"""One exception hierarchy, rendered once by the CLI.

Every error a user can cause maps to a class whose ``exit_code`` is the
process exit code documented in DESIGN.md (1 verification/policy failure,
2 usage or bad input, 3 registry/network failure) and whose ``code`` is the
stable reason code reports and JSON output carry. Both are data on the
*type*: nothing in acx-oci reads a reason out of a message, so rewording a
message can never change a verdict or an exit code.

The tree (as httpx draws its own)::

    AcxError                        exit 2  error
    ├── UsageError                  exit 2  bad_input
    │   ├── SchemaError             exit 2  schema_invalid
    │   │   ├── DuplicateMemberError        schema_invalid (not I-JSON; also a ValueError for json.loads callers)
    │   │   └── ShapeError                  schema_invalid (nested too deep or too big to walk; also a ValueError)
    │   ├── StatusListError         exit 2  status_invalid
    │   └── SandboxError            exit 2  sandbox_invalid
    │       └── SandboxUnavailable  exit 2  containment_unproven (no bwrap here)
    ├── TreeRefused                 exit 2  tree_refused   (an agent's workspace the host will not walk)
    ├── NotFoundError               exit 2  not_found      (the reference names nothing)
    │   └── LocalNotFoundError      exit 2  not_found      (OCI layout on disk)
    ├── VerificationError           exit 1  verification_failed
    │   ├── IntegrityError          exit 1  digest_mismatch
    │   │   └── TamperedError       exit 1  tampered       (a signed ROM whose bytes the signature does not cover)
    │   ├── ImageUnsafe             exit 1  image_unsafe   (an environment image layer the unpacker refuses)
    │   ├── PolicyUnreadable        exit 1  policy_unreadable (fail closed: the gateway denies)
    │   └── DidError                exit 1  did_unresolvable
    │       └── MethodNotAuthorizedError  method_not_authorized
    └── RegistryError               exit 3  fetch_failed   (unreachable, 5xx, refused, too slow)
"""

from __future__ import annotations

from typing import Any


class AcxError(Exception):
    """Base of every error acx-oci raises on purpose; the message is one line."""

    exit_code: int = 2
    code: str = "error"


class UsageError(AcxError):
    """Bad input: malformed files, wrong arguments, unsupported media types."""

    exit_code = 2
    code = "bad_input"


class SchemaError(UsageError):
    """A document read from outside does not match its JSON Schema (or is not I-JSON)."""

    code = "schema_invalid"


class DuplicateMemberError(SchemaError, ValueError):
    """A JSON object names the same member twice (not I-JSON, RFC 7493 section 2.3)."""

    def __init__(self, name: str, what: str | None = None) -> None:
        shown = name if len(name) <= 200 else name[:200] + "…"
        super().__init__(f"{what + ': ' if what else ''}duplicate member name \"{shown}\"")
        self.name = name


class ShapeError(SchemaError, ValueError):
    """A document nested deeper (or expanding larger) than any parser here will walk.

    Checked before the document is parsed, so a hostile ``[[[[…]]]]`` is one reason-coded
    rejection instead of a ``RecursionError`` in whatever walks it next.
    """


class StatusListError(UsageError):
    """A status list (or entry) is malformed, too short, legacy-encoded or a decompression bomb."""

    code = "status_invalid"


class SandboxError(UsageError):
    """The sandbox could not be built as specified (a bind source unreachable, a bad limit)."""

    code = "sandbox_invalid"


class SandboxUnavailable(SandboxError):
    """bubblewrap (or prlimit/setpriv) is missing or cannot start here: containment cannot be provided."""

    code = "containment_unproven"


class TreeRefused(AcxError):
    """A tree the host will not hash or copy: too many entries, too deep, too big, or a name that is not UTF-8."""

    code = "tree_refused"


class NotFoundError(AcxError):
    """A manifest, blob or tag does not exist in the store: the reference names nothing (bad input)."""

    exit_code = 2
    code = "not_found"


class LocalNotFoundError(NotFoundError):
    """Not found in an OCI image layout on disk: a wrong path or tag is bad input, not a network failure."""


class VerificationError(AcxError):
    """A signature, digest binding or policy did not hold."""

    exit_code = 1
    code = "verification_failed"


class IntegrityError(VerificationError):
    """Downloaded or stored bytes do not match the digest that names them."""

    code = "digest_mismatch"


class TamperedError(IntegrityError):
    """A ROM edited after signing: reported before anything its (changed) content says."""

    code = "tampered"


class ImageUnsafe(VerificationError):
    """An environment image cannot be unpacked safely (escaping names or links, over a bound, bad diff_id)."""

    code = "image_unsafe"


class PolicyUnreadable(VerificationError):
    """The policy cannot be evaluated for a request (the cartridge could not be loaded): fail closed, deny."""

    code = "policy_unreadable"

    def __init__(self, message: str, verdict: Any = None) -> None:
        super().__init__(message)
        self.verdict = verdict


class DidError(VerificationError):
    """A DID or verification method could not be resolved to a usable key."""

    code = "did_unresolvable"


class MethodNotAuthorizedError(DidError):
    """The method exists (or not) but is not under ``assertionMethod``."""

    code = "method_not_authorized"


class RegistryError(AcxError):
    """The registry (or the network to it) failed or refused the request."""

    exit_code = 3
    code = "fetch_failed"
