def edit_script_len(a, b):
    """Fewest single-character insertions or deletions turning a into b (no substitutions)."""
    raise NotImplementedError
