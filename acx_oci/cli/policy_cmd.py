"""Commands (registered on import)."""
