"""export: training data from the harness. Recorded runs read back (`runlog`), the canonical text of a call, SFT and
DPO examples (`training`), and harness-aware distillation (`distill`, which runs a suite through evals).

May import evals and everything below it; never cli.
"""
