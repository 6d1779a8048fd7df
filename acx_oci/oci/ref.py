"""Reference syntax: ``HOST[:PORT]/REPO[:TAG|@DIGEST]`` or ``oci:PATH[:TAG|@DIGEST]``."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from acx_oci.crypto import check_digest
from acx_oci.errors import UsageError

_REPO_RE = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*\Z")
_TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\Z")


@dataclass(frozen=True)
class Reference:
    """Where an artifact lives. ``kind`` is ``registry`` or ``oci`` (image layout)."""

    kind: str
    host: str = ""
    repository: str = ""
    path: str = ""
    tag: str | None = None
    digest: str | None = None

    @property
    def target(self) -> str:
        """What to resolve: the digest if pinned, else the tag, else ``latest``."""
        return self.digest or self.tag or "latest"

    def with_digest(self, digest: str) -> Reference:
        """The same reference pinned to ``digest`` (the tag kept for display)."""
        return replace(self, digest=digest)

    def with_tag(self, tag: str | None) -> Reference:
        """The same repository under ``tag``, unpinned, so the tag is resolved afresh."""
        return replace(self, tag=tag, digest=None)

    def __str__(self) -> str:
        base = f"oci:{self.path}" if self.kind == "oci" else f"{self.host}/{self.repository}"
        if self.tag:
            base += f":{self.tag}"
        if self.digest:
            base += f"@{self.digest}"
        return base


def _split_tag_digest(rest: str, what: str) -> tuple[str, str | None, str | None]:
    digest = None
    if "@" in rest:
        rest, digest = rest.rsplit("@", 1)
        check_digest(digest, f"{what} digest")
    tag = None
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        rest, tag = rest[:colon], rest[colon + 1:]
        if not _TAG_RE.match(tag):
            raise UsageError(f"{what}: invalid tag {tag!r}")
    return rest, tag, digest


def parse_reference(text: str) -> Reference:
    """Parse a reference (``HOST/REPO``, skopeo's ``docker://HOST/REPO`` or ``oci:PATH``); a layout path may not
    itself contain ':'."""
    what = f"reference {text!r}"
    if not text:
        raise UsageError("reference: expected HOST[:PORT]/REPO[:TAG|@DIGEST] or oci:PATH[:TAG|@DIGEST], found ''")
    if text.startswith("oci:"):
        rest = text[4:]
        digest = None
        if "@" in rest:
            rest, digest = rest.rsplit("@", 1)
            check_digest(digest, f"{what} digest")
        tag = None
        if ":" in rest:
            rest, tag = rest.split(":", 1)
            if not _TAG_RE.match(tag):
                raise UsageError(f"{what}: invalid tag {tag!r}")
        if not rest:
            raise UsageError(f"{what}: expected oci:PATH[:TAG|@DIGEST]")
        return Reference(kind="oci", path=rest, tag=tag, digest=digest)
    scheme = text.split("://", 1)[0] if "://" in text else ""
    if scheme in ("http", "https"):  # a URL where a reference was asked for: say what to write instead
        raise UsageError(f"{what}: a reference has no URL scheme: write {text.split('://', 1)[1]!r} "
                         "(loopback hosts use plain HTTP automatically; elsewhere --plain-http)")
    if text.startswith("docker://"):  # skopeo's transport name for a registry, as ``oci:`` is its layout's
        text = text[len("docker://"):]
        what = f"reference {text!r}"
    if "/" not in text:
        raise UsageError(f"{what}: expected HOST[:PORT]/REPO[:TAG|@DIGEST] or oci:PATH[:TAG|@DIGEST]")
    host, rest = text.split("/", 1)
    if not host or not ("." in host or ":" in host or host == "localhost"):
        raise UsageError(f"{what}: expected a registry host (with a '.' or ':PORT') before the first '/'")
    repo, tag, digest = _split_tag_digest(rest, what)
    if not _REPO_RE.match(repo):
        raise UsageError(f"{what}: invalid repository name {repo!r} (lowercase, digits, . _ - and /)")
    return Reference(kind="registry", host=host, repository=repo, tag=tag, digest=digest)
