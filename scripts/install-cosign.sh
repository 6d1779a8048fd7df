#!/usr/bin/env bash
# Fetch the real cosign (Debian trixie's cosign 2.5, a static Go binary) for the cosign interop
# tests, without touching the system's apt sources: `apt-get download` of the one .deb against a PRIVATE
# apt state directory, unpacked with `dpkg-deb -x` into the cache (like scripts/fetch-oras.sh).
#
# Prints the binary's path on stdout (progress on stderr). Nothing is fetched when the cached binary
# exists. Cache: $ACX_COSIGN_CACHE, else $XDG_CACHE_HOME/acx-oci/cosign, else ~/.cache/acx-oci/cosign.
# Environment: ACX_COSIGN_SUITE (default trixie), ACX_COSIGN_MIRROR (default: the first Debian URI in
# /etc/apt/sources.list*, else deb.debian.org).
set -euo pipefail
cache=${ACX_COSIGN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acx-oci/cosign}
out="$cache/usr/bin/cosign"
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
suite=${ACX_COSIGN_SUITE:-trixie}
mirror=${ACX_COSIGN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v -- '-security' | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
    | grep -v -- '-security' | head -n1 || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}
work=$(mktemp -d "${TMPDIR:-/tmp}/acx-cosign.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" > "$work/sources.list"
opts=(-q -o "Dir::State=$work/state" -o "Dir::Cache=$work/cache" -o "Dir::Etc::SourceList=$work/sources.list"
      -o "Dir::Etc::SourceParts=/dev/null" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
echo "install-cosign: fetching cosign from $mirror $suite" >&2
apt-get "${opts[@]}" update >&2
(cd "$work/debs" && apt-get "${opts[@]}" download cosign >&2)
dpkg-deb -x "$work"/debs/cosign_*.deb "$work/root"
[ -x "$work/root/usr/bin/cosign" ] || { echo "install-cosign: no usr/bin/cosign in the .deb" >&2; exit 1; }
mkdir -p "$cache"
rm -rf "$cache/usr.tmp.$$"
cp -a "$work/root/usr" "$cache/usr.tmp.$$"
rm -rf "$cache/usr"
mv "$cache/usr.tmp.$$" "$cache/usr"
echo "install-cosign: $(dpkg-deb -f "$work"/debs/cosign_*.deb Version)" >&2
echo "$out"
