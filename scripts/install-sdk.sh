#!/usr/bin/env bash
# The official model SDKs for the sandbox's /usr/bin/python3: the script ships inside the package (it is what
# `acx-oci dev install-sdk` runs, so no clone is needed); this path stays for scripts/test.sh and CI.
exec bash "$(dirname "$0")/../acx_oci/cli/install-sdk.sh" "$@"
