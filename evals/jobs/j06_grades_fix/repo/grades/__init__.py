"""A grade calculator: averages and letters (grades/calc.py) and a class report (grades/report.py)."""
