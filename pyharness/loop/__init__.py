"""loop: one run of a job. The agent (run -> step -> query -> act), reading a reply into one action, what each mode
allows and accepts (`jobs`), the prompts, the harness's own test run after a change (`autocheck`), the run's set-up
(`session`), its transcript, and the records of what a run was given and gave back (`runs`, `refusals`, `citations`).

May import trials, localise, actions, harness, workspace and models; never cli, evals or export (they drive the loop
from above). Never prints: it emits events that cli renders.
"""
