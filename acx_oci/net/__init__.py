"""Network edges that are not an OCI registry: one bounded HTTPS fetcher."""
