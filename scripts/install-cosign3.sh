#!/usr/bin/env bash
# Fetch the real cosign 3 (Debian sid's cosign 3.x, a static Go binary: one .deb) for the cosign 3 interop
# tests, the same way scripts/install-cosign.sh fetches trixie's cosign 2.5: `apt-get download` against a
# PRIVATE apt state directory (the system's apt sources are not touched), `dpkg-deb -x` into a cache of its own.
#
# Prints the binary's path on stdout (progress on stderr). Nothing is fetched when the cached binary exists.
# Cache: $ACX_COSIGN3_CACHE, else $XDG_CACHE_HOME/acx-oci/cosign3, else ~/.cache/acx-oci/cosign3.
# Environment: ACX_COSIGN3_SUITE (default sid), ACX_COSIGN_MIRROR (as for scripts/install-cosign.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${ACX_COSIGN3_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acx-oci/cosign3}
ACX_COSIGN_CACHE=$cache ACX_COSIGN_SUITE=${ACX_COSIGN3_SUITE:-sid} bash "$here/install-cosign.sh"
