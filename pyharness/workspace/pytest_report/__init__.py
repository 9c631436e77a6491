"""ph's pytest plugin, `ph_pytest_report`: this folder goes on a test run's PYTHONPATH (it is not imported by ph)."""
