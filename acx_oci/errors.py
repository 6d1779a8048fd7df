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
    │   ├── RequestRefused          exit 2  request_refused (the gateway's router: a path/digest with two readings)
    │   ├── NoteInvalid             exit 2  note_invalid   (not a C2SP signed note / checkpoint / vkey)
    │   ├── MachineUnfit            exit 2  bad_input      (no mmdebstrap or bwrap, the package index unreachable)
    │   └── SandboxError            exit 2  sandbox_invalid
    │       └── SandboxUnavailable  exit 2  containment_unproven (no bwrap here)
    │           └── HarnessFault    exit 2  containment_unproven (certification: retried, recorded, never raised)
│               └── Abandoned   exit 2  containment_unproven (an interrupted certification's runs in flight)
    ├── TreeRefused                 exit 2  tree_refused   (an agent's workspace the host will not walk)
    ├── PathOutside                 exit 2  path_outside   (an input file or link that leaves its directory)
    ├── NotFoundError               exit 2  not_found      (the reference names nothing)
    │   └── LocalNotFoundError      exit 2  not_found      (OCI layout on disk)
    ├── VerificationError           exit 1  verification_failed
    │   ├── IntegrityError          exit 1  digest_mismatch
    │   │   └── TamperedError       exit 1  tampered       (a signed ROM whose bytes the signature does not cover)
    │   ├── WorkerAnswerRefused     exit 1  worker_answer_refused (a Dask worker's answer is not plain data)
    │   ├── StatusReplaceRefused    exit 1  status_replace_refused (copy: a source list that may not replace one)
    │   ├── ImageUnsafe             exit 1  image_unsafe   (an environment image layer the unpacker refuses)
    │   ├── PolicyUnreadable        exit 1  policy_unreadable (fail closed: the gateway denies)
    │   ├── GatewayDenied           exit 1  gateway_denied (an acx-oci gateway's policy refused the request)
    │   ├── LogError                exit 1  log_invalid    (a transparency log's tiles or proofs do not hold)
    │   │   ├── NotLogged                   not_logged     (no valid inclusion proof for the entry)
    │   │   ├── LogInconsistent             log_inconsistent (a fork, a shrink, a rewind: no consistency proof)
    │   │   └── NoteUnverified              note_unverified (no trusted key, a bad signature, too few witnesses)
    │   ├── WitnessRefused          exit 1  witness_refused (a tlog-witness answered 4xx to add-checkpoint)
    │   └── DidError                exit 1  did_unresolvable
    │       └── MethodNotAuthorizedError  method_not_authorized
    └── RegistryError               exit 3  fetch_failed   (unreachable, 5xx, refused, too slow)
        ├── PublicationFailed       exit 3  publish_failed (attest: signed, kept on disk, not pushed; counted)
        ├── ConnectionLost          exit 3  fetch_failed   (reset or closed mid-request: a retry may work)
        ├── DeadlineExceeded        exit 3  deadline_exceeded (the operation's --deadline passed)
        └── ByteBoundReached        exit 3  byte_bound     (resolve: the byte bound is read; no new fetch starts)
"""

from __future__ import annotations

from typing import Any

from acx_oci import reasons


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, with a word on what it left behind (an attest's attempt that still counts): the CLI prints it."""


class AcxError(Exception):
    """Base of every error acx-oci raises on purpose; the message is one line."""

    exit_code: int = 2
    code: str = "error"


class UsageError(AcxError):
    """Bad input: malformed files, wrong arguments, unsupported media types."""

    exit_code = 2
    code = reasons.BAD_INPUT


class SchemaError(UsageError):
    """A document read from outside does not match its JSON Schema (or is not I-JSON)."""

    code = reasons.SCHEMA_INVALID


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

    code = reasons.STATUS_INVALID


class RequestRefused(UsageError):
    """A request the gateway's router will not forward; carries the HTTP status and the OCI error code."""

    code = reasons.REQUEST_REFUSED

    def __init__(self, message: str, status: int = 400, oci_code: str = "NAME_INVALID") -> None:
        super().__init__(message)
        self.status = status
        self.oci_code = oci_code
        self.message = message


class SandboxError(UsageError):
    """The sandbox could not be built as specified (a bind source unreachable, a bad limit)."""

    code = reasons.SANDBOX_INVALID


class SandboxUnavailable(SandboxError):
    """bubblewrap (or prlimit/setpriv) is missing or cannot start here: containment cannot be provided."""

    code = reasons.CONTAINMENT_UNPROVEN


class HarnessFault(SandboxUnavailable):
    """Certification's harness, not the exam, failed a run after every retry (EAGAIN, a lost sandbox, a grade past
    its deadline under load): recorded as a lane error of the harness, never raised to a user."""


class Abandoned(HarnessFault):
    """A sandbox run stopped because the certification around it was interrupted (Ctrl-C, SIGTERM): the exams in
    flight end in seconds as harness lane errors (no verdict, never cached), not after their last grade."""


class EnvironmentRefused(UsageError):
    """An exam's environment image could not be built or pulled (a requirement with no wheel, a failed install):
    the exam is refused at gold with the reason, and the refusal is never cached."""


class MachineUnfit(UsageError):
    """This machine cannot build an environment image (mmdebstrap or bubblewrap missing, the package index
    unreachable, the Debian root not made): no exam's fault and the same for every spec, so certification tries
    no other build in the run and says how to proceed (``host_can_grade``: ``--no-environments`` is a way out;
    ``store``: the image store itself cannot be read, so no other spec looks there either)."""

    def __init__(self, message: str, *, host_can_grade: bool = True, store: bool = False) -> None:
        super().__init__(message)
        self.host_can_grade, self.store = host_can_grade, store


class NoWheel(UsageError):
    """A requirement has no wheel for the image's Python (``sdists``: the source distributions pip saw, never
    built on the host; ``env build`` builds one inside the sandbox unless ``--wheels-only``)."""

    def __init__(self, message: str, name: str = "", sdists: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.name, self.sdists = name, sdists


class TreeRefused(AcxError):
    """A tree the host will not hash or copy: too many entries, too deep, too big, or a name that is not UTF-8."""

    code = reasons.TREE_REFUSED


class TreeTooSlow(TreeRefused):
    """A read of a tree (a git process) that ran out of time: on a loaded machine, worth trying again later."""


class PathOutside(AcxError):
    """A name or link in a tree from outside (a suite, an exam, a cartridge, an image) that leads out of it."""

    code = reasons.PATH_OUTSIDE


class NotFoundError(AcxError):
    """A manifest, blob or tag does not exist in the store: the reference names nothing (bad input)."""

    exit_code = 2
    code = reasons.NOT_FOUND


class LocalNotFoundError(NotFoundError):
    """Not found in an OCI image layout on disk: a wrong path or tag is bad input, not a network failure."""


class VerificationError(AcxError):
    """A signature, digest binding or policy did not hold."""

    exit_code = 1
    code = reasons.VERIFICATION_FAILED


class IntegrityError(VerificationError):
    """Downloaded or stored bytes do not match the digest that names them."""

    code = reasons.DIGEST_MISMATCH


class TamperedError(IntegrityError):
    """A ROM edited after signing: reported before anything its (changed) content says."""

    code = reasons.TAMPERED


class WorkerAnswerRefused(VerificationError):
    """A Dask worker's answer that is not plain, well-formed data (its game ends lane-error, never a verdict)."""

    code = reasons.WORKER_ANSWER_REFUSED


class StatusReplaceRefused(VerificationError):
    """A copy would replace the destination's status list with one that does not verify as the same issuer's."""

    code = reasons.STATUS_REPLACE_REFUSED


class ImageUnsafe(VerificationError):
    """An environment image cannot be unpacked safely (escaping names or links, over a bound, bad diff_id)."""

    code = reasons.IMAGE_UNSAFE


class PolicyUnreadable(VerificationError):
    """The policy cannot be evaluated for a request (the cartridge could not be loaded): fail closed, deny."""

    code = reasons.POLICY_UNREADABLE

    def __init__(self, message: str, verdict: Any = None) -> None:
        super().__init__(message)
        self.verdict = verdict


class GatewayDenied(VerificationError):
    """An acx-oci gateway refused a pull or push on policy grounds (its reason is in the message)."""

    code = reasons.GATEWAY_DENIED


class DidError(VerificationError):
    """A DID or verification method could not be resolved to a usable key."""

    code = reasons.DID_UNRESOLVABLE


class MethodNotAuthorizedError(DidError):
    """The method exists (or not) but is not under ``assertionMethod``."""

    code = reasons.METHOD_NOT_AUTHORIZED


class RegistryError(AcxError):
    """The registry (or the network to it) failed or refused the request."""

    exit_code = 3
    code = reasons.FETCH_FAILED


class PublicationFailed(RegistryError):
    """The registry failed while an issued result was pushed: kept on disk for ``attest --publish``."""

    code = reasons.PUBLISH_FAILED


class ConnectionLost(RegistryError):
    """The connection broke after it was opened (reset, closed mid-answer): unlike a refused connect,
    worth retrying — an upload then starts a new session."""


class DeadlineExceeded(RegistryError):
    """The whole operation's wall-clock deadline (``--deadline``) passed; outstanding requests were cut."""

    code = reasons.DEADLINE_EXCEEDED


class ByteBoundReached(RegistryError):
    """A resolution has read its byte bound: no further fetch starts (the answer is ``partial``, with the reason)."""

    code = reasons.BYTE_BOUND


class NoteInvalid(UsageError):
    """Bytes that are not a C2SP signed note, checkpoint or verifier key (format, before any key is used)."""

    code = reasons.NOTE_INVALID


class LogError(VerificationError):
    """A transparency log's data does not hold: a proof, a tile or a signature fails."""

    code = reasons.LOG_INVALID


class NotLogged(LogError):
    """An entry the log cannot show: its inclusion proof does not lead to a trusted checkpoint's root."""

    code = reasons.NOT_LOGGED


class LogInconsistent(LogError):
    """Two tree heads of one log that no consistency proof joins: a fork, a shrink or a rewind."""

    code = reasons.LOG_INCONSISTENT


class NoteUnverified(LogError):
    """A note no trusted key signed, a trusted key's signature that fails, or fewer cosignatures than the quorum."""

    code = reasons.NOTE_UNVERIFIED


class WitnessRefused(VerificationError):
    """A tlog-witness refused a checkpoint (403/404/422, or 409 twice): carries the HTTP status."""

    code = reasons.WITNESS_REFUSED

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status
