"""acx-oci: OCI-native attestation of AI agent cartridges."""

__version__ = "0.1.0"
