"""A reverse Polish notation calculator: tokens (rpncalc/tokens.py) and evaluation (rpncalc/machine.py)."""
