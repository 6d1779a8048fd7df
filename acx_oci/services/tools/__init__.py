"""Tools around the use cases: the demo, ``doctor`` (what this machine can run), the shipped examples.
"""
