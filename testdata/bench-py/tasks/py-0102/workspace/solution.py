def acronym(s):
    """Acronym of a phrase: first letters of its words, upper-case; hyphens split words."""
    raise NotImplementedError
