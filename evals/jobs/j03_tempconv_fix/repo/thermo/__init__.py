"""Temperature conversions (thermo/convert.py) and station readings (thermo/readings.py)."""
