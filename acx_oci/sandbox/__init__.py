"""Placeholder: the bubblewrap sandbox lands here."""
