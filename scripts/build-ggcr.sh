#!/usr/bin/env bash
# Build the tests' second registry: go-containerregistry's pkg/registry with the OCI 1.1 Referrers
# API on (tests/support/ggcr/main.go), offline from Debian packages, and cache the binary.
#
# Prints the binary's path on stdout (progress goes to stderr). Nothing is built when the cached
# binary for this main.go exists. Cache: $ACX_GGCR_CACHE, else $XDG_CACHE_HOME/acx-oci, else
# ~/.cache/acx-oci; the binary is ggcr-registry-<first 12 hex of sha256(main.go)>.
#
# How: `apt-get download` of trixie's golang-1.24-go, golang-1.24-src and
# golang-github-google-go-containerregistry-dev (0.20.1) against a PRIVATE apt state directory
# (its own sources.list naming the trixie suite of the Debian mirror this machine uses; the
# system's apt sources and state are not touched), `dpkg-deb -x` into a scratch directory, then
# `GO111MODULE=off GOPATH=<unpacked>/usr/share/gocode go build`. Needs no root (apt-get download
# runs as any user). About 50 MB downloaded, ~25 s of build on 2 cores.
#
# Environment: ACX_GGCR_SUITE (default trixie), ACX_GGCR_GO (default golang-1.24),
#              ACX_GGCR_MIRROR (default: the first Debian URI in /etc/apt/sources.list*).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd -P)
src="$here/tests/support/ggcr/main.go"
cache=${ACX_GGCR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acx-oci}
sum=$(sha256sum "$src" | cut -c1-12)
out="$cache/ggcr-registry-$sum"
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi

suite=${ACX_GGCR_SUITE:-trixie}
gover=${ACX_GGCR_GO:-golang-1.24}
mirror=${ACX_GGCR_MIRROR:-}
if [ -z "$mirror" ]; then
  # deb822 (.sources: "URIs: ...") or one-line ("deb [opts] URI suite ..."), skipping the security archive
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v -- '-security' | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
    | grep -v -- '-security' | head -n1 || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

work=$(mktemp -d "${TMPDIR:-/tmp}/acx-ggcr-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/state/lists/partial" "$work/apt/cache/archives/partial" "$work/debs" "$work/root" \
  "$work/gopath/src/ggcr-registry"
echo "deb [signed-by=$keyring] $mirror $suite main" > "$work/apt/sources.list"
apt_opts=(-q -o "Dir::State=$work/apt/state" -o "Dir::Cache=$work/apt/cache"
  -o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
  -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
start=$(date +%s)
echo "build-ggcr: fetching $gover and go-containerregistry from $mirror $suite" >&2
apt-get "${apt_opts[@]}" update >&2
(cd "$work/debs" && apt-get "${apt_opts[@]}" download "$gover-go" "$gover-src" \
  golang-github-google-go-containerregistry-dev >&2)
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
goroot=$(find "$work/root/usr/lib" -maxdepth 1 -name 'go-*' -type d | head -n1)
[ -x "$goroot/bin/go" ] || { echo "build-ggcr: no go toolchain in the unpacked $gover-go" >&2; exit 1; }
cp "$src" "$work/gopath/src/ggcr-registry/main.go"
echo "build-ggcr: building with $("$goroot/bin/go" version | cut -d' ' -f3)" >&2
mkdir -p "$cache"
(cd "$work/gopath/src/ggcr-registry" && env GOROOT="$goroot" GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local \
  GOPATH="$work/gopath:$work/root/usr/share/gocode" GOCACHE="$work/gocache" CGO_ENABLED=0 \
  "$goroot/bin/go" build -trimpath -o "$work/ggcr-registry" .) >&2
mv -f "$work/ggcr-registry" "$out.tmp.$$"
mv -f "$out.tmp.$$" "$out"
echo "build-ggcr: built $out in $(( $(date +%s) - start )) s" >&2
echo "$out"
