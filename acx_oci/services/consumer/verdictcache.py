"""The consumer's verified-credential verdicts, so a second ``resolve`` of a cartridge does no signature work.

Kept beside the status-list history (``DIR/verdicts.json``, DIR as in :mod:`acx_oci.services.consumer.statuscache`).
An entry is keyed by the credential's digest (its exact bytes) and the trust file's digest, and holds what
signature work established for those bytes: the keys its proof verified with (a hit needs the proof to name
exactly those keys again) and the replay verdicts of its game records (per record layer set). Rules that
depend on ``now``, the status list or the cartridge run every time. Bounded (:data:`MAX_ENTRIES`, oldest
dropped first); a file that does not parse, or an entry of the wrong shape, is ignored and nothing in it is
believed. Whoever can write this file can make this consumer believe a signature: it lives in the user's own
cache directory, like the status history whose marks guard against rollback.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from acx_oci.evaluation import NAME, Check, ok
from acx_oci.trust import Trust

FILE = "verdicts.json"
MAX_ENTRIES = 20000
_HEX = re.compile(r"^[0-9a-f]{64}\Z")


def trust_digest(trust: Trust) -> str:
    """A digest of what the trust file decides (not where it was read from)."""
    data = {k: v for k, v in dataclasses.asdict(trust).items() if k != "source"}
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True, default=repr).encode()).hexdigest()


class VerifiedCredentialCache:
    """The verdicts file of one cache directory; thread-safe; written by :meth:`flush` when changed."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = self._load()
        self._dirty = False

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            doc = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        entries = doc.get("entries") if isinstance(doc, dict) and doc.get("version") == 1 else None
        return {k: v for k, v in entries.items() if isinstance(v, dict)} if isinstance(entries, dict) else {}

    def view(self, trust: Trust) -> TrustView:
        """The entries made under this trust file."""
        return TrustView(self, trust_digest(trust))

    def get(self, key: str) -> dict[str, Any] | None:
        """One entry (a copy), or None."""
        with self._lock:
            entry = self._entries.get(key)
            return dict(entry) if entry is not None else None

    def put(self, key: str, field: str, value: Any) -> None:
        """Set ``field`` of the entry ``key`` (newest last; the oldest beyond the bound are dropped)."""
        with self._lock:
            entry = self._entries.pop(key, {})
            entry[field] = value
            self._entries[key] = entry
            while len(self._entries) > MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)))
            self._dirty = True

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def flush(self) -> None:
        """Write the file when something changed (atomically; a failure to write loses only the cache)."""
        with self._lock:
            if not self._dirty:
                return
            data = json.dumps({"version": 1, "entries": self._entries}, separators=(",", ":")).encode()
            self._dirty = False
        tmp = self.path.with_name(f".{FILE}.{os.getpid()}.{threading.get_ident()}")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)


class TrustView:
    """The cache under one trust file: what fills the judge's ``Material.known_proofs`` (and keeps its
    ``Judgement.proofs_verified``), and replay's verdict store."""

    def __init__(self, cache: VerifiedCredentialCache, trust: str) -> None:
        self.cache, self.trust = cache, trust

    def _key(self, credential_digest: str) -> str:
        return f"{credential_digest}|{self.trust}"

    def proof_keys(self, credential_digest: str) -> frozenset[bytes] | None:
        """The keys the credential's proof verified with before, or None (also for a malformed entry)."""
        entry = self.cache.get(self._key(credential_digest))
        keys = entry.get("keys") if entry else None
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and _HEX.match(k) for k in keys):
            return None
        return frozenset(bytes.fromhex(k) for k in keys)

    def remember(self, credential_digest: str, keys: frozenset[bytes]) -> None:
        """Every rule passed for these bytes with these keys."""
        if keys:
            self.cache.put(self._key(credential_digest), "keys", sorted(k.hex() for k in keys))

    def replayed(self, credential_digest: str, layers: tuple[str, ...]) -> Check | None:
        """The replay verdict recorded for these bytes and record layers (only successes are kept).

        ``layers`` names the record layers and the issuer keys the records were checked with.
        """
        entry = self.cache.get(self._key(credential_digest))
        replay = entry.get("replay") if entry else None
        message = replay.get(_layers(layers)) if isinstance(replay, dict) else None
        return ok(NAME, message + " (consumer verdict cache)") if isinstance(message, str) else None

    def remember_replay(self, credential_digest: str, layers: tuple[str, ...], verdict: Check) -> None:
        """Keep a successful replay (a failure is cheap to find again and may have been a fetch failure)."""
        if not verdict.ok:
            return
        entry = self.cache.get(self._key(credential_digest)) or {}
        old = entry.get("replay")
        replay: dict[str, Any] = old if isinstance(old, dict) else {}
        self.cache.put(self._key(credential_digest), "replay", {**replay, _layers(layers): verdict.message})


def _layers(layers: tuple[str, ...]) -> str:
    return hashlib.sha256("\n".join(layers).encode()).hexdigest()
