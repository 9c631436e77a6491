"""ph's pytest plugin, `ph_pytest_report`: every pytest run loads it from its file by path (`testrun.BOOT`); ph
itself never imports it."""
