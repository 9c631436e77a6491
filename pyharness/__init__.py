"""py-harness: a coding helper that lets small local models work on a Python repo through a deterministic harness."""

__version__ = "0.1.0"
