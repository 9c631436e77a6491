"""localise: where the bug is. Spectrum-based fault localisation (which lines the failing tests ran and the passing
ones did not), the traced values of one failing test, suspect lines ranked for cloze repair, and the files a task is
about in a large tree.

May import harness, workspace and models; never trials, loop or anything above.
"""
