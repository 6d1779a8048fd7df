#!/usr/bin/env bash
# Fetch the ORAS CLI for the mirror interop tests without touching the system's apt sources:
# Debian trixie's `oras` .deb (a static Go binary) via apt-get download against a private apt
# state directory, unpacked with dpkg-deb -x. Bookworm does not package it.
#   scripts/fetch-oras.sh DEST_DIR      ->  DEST_DIR/usr/bin/oras
set -euo pipefail
dest=${1:?usage: scripts/fetch-oras.sh DEST_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  > "$work/sources.list"
opts=(-o "Dir::State=$work/state" -o "Dir::Cache=$work/cache" -o "Dir::Etc::SourceList=$work/sources.list"
      -o "Dir::Etc::SourceParts=/dev/null" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
apt-get update -q "${opts[@]}" >/dev/null
(cd "$work" && apt-get download -q "${opts[@]}" oras >/dev/null)
mkdir -p "$dest"
dpkg-deb -x "$work"/oras_*.deb "$dest"
"$dest/usr/bin/oras" version | head -1
