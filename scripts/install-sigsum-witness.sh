#!/usr/bin/env bash
# Fetch the real sigsum-witness (Debian trixie's sigsum-go, a static Go binary) for the witness interop
# tests, without touching the system's apt sources: `apt-get download` of the one .deb against a PRIVATE
# apt state directory, unpacked with `dpkg-deb -x` into the cache (like scripts/fetch-oras.sh).
#
# Prints the binary's path on stdout (progress on stderr). Nothing is fetched when the cached binary
# exists. Cache: $ACX_SIGSUM_CACHE, else $XDG_CACHE_HOME/acx-oci/sigsum, else ~/.cache/acx-oci/sigsum.
# Environment: ACX_SIGSUM_SUITE (default trixie), ACX_SIGSUM_MIRROR (default: the first Debian URI in
# /etc/apt/sources.list*, else deb.debian.org).
set -euo pipefail
cache=${ACX_SIGSUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acx-oci/sigsum}
out="$cache/usr/bin/sigsum-witness"
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
suite=${ACX_SIGSUM_SUITE:-trixie}
mirror=${ACX_SIGSUM_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v -- '-security' | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
    | grep -v -- '-security' | head -n1 || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}
work=$(mktemp -d "${TMPDIR:-/tmp}/acx-sigsum.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" > "$work/sources.list"
opts=(-q -o "Dir::State=$work/state" -o "Dir::Cache=$work/cache" -o "Dir::Etc::SourceList=$work/sources.list"
      -o "Dir::Etc::SourceParts=/dev/null" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
echo "install-sigsum-witness: fetching sigsum-go from $mirror $suite" >&2
apt-get "${opts[@]}" update >&2
(cd "$work/debs" && apt-get "${opts[@]}" download sigsum-go >&2)
dpkg-deb -x "$work"/debs/sigsum-go_*.deb "$work/root"
[ -x "$work/root/usr/bin/sigsum-witness" ] || { echo "install-sigsum-witness: no usr/bin/sigsum-witness in the .deb" >&2; exit 1; }
mkdir -p "$cache"
rm -rf "$cache/usr.tmp.$$"
cp -a "$work/root/usr" "$cache/usr.tmp.$$"
rm -rf "$cache/usr"
mv "$cache/usr.tmp.$$" "$cache/usr"
echo "install-sigsum-witness: $(dpkg-deb -f "$work"/debs/sigsum-go_*.deb Version)" >&2
echo "$out"
