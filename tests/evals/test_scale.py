"""`ph eval --on ray` (issue 26) on a real local Ray (`ray.init(num_cpus=2)`, started here): every run recorded once,
a killed worker's run retried, a stopped driver resumed, server slots kept, dead servers taken out, the same records
as the plain runner, and a folder of job folders run through the command line on the test's cluster."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from fake_openai import FakeOpenAI
from scalekit import (
    ADD,
    ADD_TWO,
    FIX,
    FIXED,
    SHOUT,
    SQUARE,
    comparable,
    write_job,
    write_program,
    write_replies,
    write_tasks,
)

from pyharness.errors import ModelError, UserError
from pyharness.evals.configs import parse_configs
from pyharness.evals.fanout import run_on_ray
from pyharness.evals.report import read_results, record_key
from pyharness.evals.runner import EvalPlan, Models, run_eval
from pyharness.evals.suites import load_suite
from pyharness.evals.tasks import load_task_dir
from pyharness.loop.agent import AgentConfig

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'py-harness[scale]' to run the Ray tests")

PROGRAM = write_program(SHOUT["reference"])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One local Ray for the module, two CPUs; its workers keep ph's state in a temp folder."""
    state = tmp_path_factory.mktemp("ray-state")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PH_STATE_DIR": str(state), "PH_CONFIG": str(state / "config.toml")}})
    yield ray
    ray.shutdown()


def shouts(folder: Path, n: int) -> list:
    """n stdout tasks that the same program solves (a fake server gives every run the same reply)."""
    return load_task_dir(write_tasks(folder, *({**SHOUT, "id": f"shout{i}"} for i in range(n))), "shouts").tasks


def lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_the_same_suite_gives_the_same_records_with_and_without_ray(cluster, tmp_path):
    suite = load_task_dir(write_tasks(tmp_path / "tasks", SHOUT, ADD_TWO), "mine")
    spec = f"scripted:{write_replies(tmp_path / 'replies', {'shout': [PROGRAM, 'Action: done {}'], 'add': ['No.']})}"
    plan = EvalPlan("mine", suite.tasks, [spec], parse_configs(["protocol=text,oneshot harness=on,off"]),
                    agent=AgentConfig(max_steps=2))
    plain = run_eval(plan, tmp_path / "plain", Models([spec]))
    seen = []
    fanned = run_on_ray(plan, tmp_path / "ray", on_result=lambda record, done, total: seen.append((done, total)))
    assert fanned.notes == [] and fanned.left == 0
    assert seen == [(n, 6) for n in range(1, 7)]  # the progress counts runs finished across the cluster
    on_ray = lines(tmp_path / "ray")
    assert len(on_ray) == 6 and len({record_key(r) for r in on_ray}) == 6
    by_order = sorted(on_ray, key=lambda r: r["order"])
    assert [comparable(r) for r in by_order] == [comparable(r) for r in sorted(plain, key=lambda r: r["order"])]
    assert {r["host"] for r in on_ray} == {socket.gethostname()} and {r["server"] for r in on_ray} == {""}
    assert sum(r["pass_strict"] for r in on_ray) == 3  # shout in each configuration; add in none
    for record in on_ray:  # the driver wrote each transcript, as the plain runner does
        ours, theirs = tmp_path / "ray" / record["transcript"], tmp_path / "plain" / record["transcript"]
        assert ours.is_file() and [json.loads(x)["event"] for x in ours.read_text().splitlines()] == \
            [json.loads(x)["event"] for x in theirs.read_text().splitlines()]


def test_a_stopped_driver_resumes_with_or_without_ray_and_never_duplicates(cluster, tmp_path):
    suite = load_task_dir(write_tasks(tmp_path / "tasks", SHOUT, ADD_TWO), "mine")
    spec = f"scripted:{write_replies(tmp_path / 'replies', {'shout': [PROGRAM], 'add': [PROGRAM]})}"
    plan = EvalPlan("mine", suite.tasks, [spec], parse_configs(["harness=on,off"]), repeats=2,
                    agent=AgentConfig(max_steps=1))
    out = tmp_path / "out"

    def stop(record, done, total):
        raise KeyboardInterrupt  # Ctrl-C in the driver as the first record comes back

    with pytest.raises(KeyboardInterrupt):
        run_on_ray(plan, out, on_result=stop)
    assert len(lines(out)) == 1
    rest = run_on_ray(plan, out)
    assert len(rest.written) == 7
    assert run_eval(plan, out, Models([spec])) == [] and run_on_ray(plan, out).written == []
    records, problems = read_results(out / "results.jsonl")
    assert problems == [] and len(records) == 8 and len({record_key(r) for r in records}) == 8


def test_ctrl_c_stops_the_command_and_the_same_command_resumes(cluster, tmp_path):
    shouts(tmp_path / "tasks", 4)
    dead = FakeOpenAI(lambda exchange: None).__enter__()
    dead.stop()
    with FakeOpenAI(lambda exchange: exchange.reply(PROGRAM, pieces=3, delay=0.5)) as server:
        command = [sys.executable, "-m", "pyharness.cli", "eval", str(tmp_path / "tasks"), "--on", "ray",
                   "--model", f"openai:fake@{server.url},{dead.url}", "--out", str(tmp_path / "out")]
        env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}  # joins the test's cluster
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                 cwd=tmp_path)
        results = tmp_path / "out" / "results.jsonl"
        deadline = time.monotonic() + 120
        while not (results.is_file() and results.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        first.send_signal(signal.SIGINT)
        _, stderr = first.communicate(timeout=120)
        assert first.returncode == 130, stderr
        assert f"ph: interrupted; finished runs are in {tmp_path / 'out' / 'results.jsonl'}: run the same command to " \
               "resume" in stderr
        stopped_at = len(lines(tmp_path / "out"))
        assert 1 <= stopped_at < 4
        again = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"(resuming: {4 - stopped_at} runs left)" in again.stdout
    records = lines(tmp_path / "out")
    assert len(records) == 4 and len({record_key(r) for r in records}) == 4 and all(r["pass_strict"] for r in records)
    spec = f"openai:fake@{server.url},{dead.url}"
    note = f"server {dead.url} of {spec} taken out before the eval: no server at {dead.url}"
    [said] = [line for line in again.stderr.splitlines() if note in line]  # the summary says so, in one line
    assert said.startswith("note ") and f"- {note}" in (tmp_path / "out" / "summary.md").read_text()


def test_a_killed_worker_is_retried_and_its_run_recorded_once(cluster, tmp_path):
    killed = []

    def chat(exchange):
        if not killed:  # the first request: kill the Ray worker process that sent it, mid-run
            # the client's end of this very connection: its address and port, connected to this server's port
            # (a port number alone can also be some other socket's on another address, the test's own included)
            client, server_port = exchange.handler.client_address, exchange.handler.server.server_address[1]
            pid = next(c.pid for c in psutil.net_connections("tcp") if c.pid and c.laddr and c.raddr
                       and (c.laddr.ip, c.laddr.port) == client[:2] and c.raddr.port == server_port)
            assert pid != os.getpid()
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)
            return
        exchange.reply(PROGRAM)

    with FakeOpenAI(chat) as server:
        spec = f"openai:fake@{server.url}"
        plan = EvalPlan("shouts", shouts(tmp_path / "tasks", 2), [spec], parse_configs(["harness=on"]),
                        agent=AgentConfig(max_steps=2))
        fanned = run_on_ray(plan, tmp_path / "out")
    assert len(killed) == 1
    records = lines(tmp_path / "out")
    assert sorted(r["task"] for r in records) == ["shout0", "shout1"]
    assert all(r["pass_strict"] and r["server"] == server.url for r in records), records
    assert fanned.notes == ["1 run(s) re-queued: their worker died"]


def test_two_servers_with_one_slot_each_never_see_two_requests_at_once(cluster, tmp_path):
    def slow(exchange):
        exchange.reply(PROGRAM, pieces=4, delay=1.0)  # busy long enough for the next run to want it too

    def fast(exchange):
        exchange.reply(PROGRAM)

    # two CPUs run two runs at once: when the fast server's run ends, only a slot rule keeps the next run off the slow
    with FakeOpenAI(slow) as a, FakeOpenAI(fast) as b:
        spec = f"openai:fake@{a.url},{b.url}"
        plan = EvalPlan("shouts", shouts(tmp_path / "tasks", 4), [spec], parse_configs(["harness=on"]),
                        agent=AgentConfig(max_steps=2))
        fanned = run_on_ray(plan, tmp_path / "out", per_server=1)
    records = lines(tmp_path / "out")
    assert len(records) == 4 and all(r["pass_strict"] for r in records) and fanned.notes == []
    assert {r["server"] for r in records} == {a.url, b.url} and {r["model"] for r in records} == {spec}
    assert (a.most, b.most) == (1, 1) and len(a.requests) + len(b.requests) >= 4


def test_dead_servers_are_taken_out_with_a_one_line_note_and_their_runs_requeued(cluster, tmp_path):
    dead = FakeOpenAI(lambda exchange: exchange.reply(PROGRAM)).__enter__()
    dead.stop()  # gone before the eval

    def dies(exchange):
        dying.stop()  # goes away in the middle of its first run's request, without a word

    def chat(exchange):
        exchange.reply(PROGRAM)

    with FakeOpenAI(chat) as alive, FakeOpenAI(dies) as dying:
        spec = f"openai:fake@{alive.url},{dead.url},{dying.url}"
        plan = EvalPlan("shouts", shouts(tmp_path / "tasks", 3), [spec], parse_configs(["harness=on"]),
                        agent=AgentConfig(max_steps=2))
        fanned = run_on_ray(plan, tmp_path / "out", per_server=1)
    records = lines(tmp_path / "out")
    assert len(records) == 3 and all(r["pass_strict"] and r["server"] == alive.url for r in records), records
    before, during, requeued = fanned.notes
    assert before.startswith(f"server {dead.url} of {spec} taken out before the eval: no server at {dead.url} "
                             "(connection refused)")
    assert during.startswith(f"server {dying.url} of {spec} taken out mid-eval: no server at {dying.url}")
    assert during.endswith("1 run(s) on it re-queued") and requeued == "1 run(s) re-queued: their server went away"
    assert all("\n" not in note for note in fanned.notes)


def test_a_model_with_no_server_left_is_a_one_line_error(cluster, tmp_path):
    dead = FakeOpenAI(lambda exchange: None).__enter__()
    dead.stop()
    plan = EvalPlan("shouts", shouts(tmp_path / "tasks", 1), [f"openai:fake@{dead.url}"], parse_configs(None))
    with pytest.raises(ModelError) as refused:
        run_on_ray(plan, tmp_path / "out")
    assert str(refused.value).startswith(f"no server of openai:fake@{dead.url} answers: no server at {dead.url} "
                                         "(connection refused)")
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_embedded_runs_asking_for_more_cpus_than_a_node_has_are_refused(cluster, tmp_path):
    plan = EvalPlan("shouts", shouts(tmp_path / "tasks", 1), ["llamacpp:qwen2.5-coder-1.5b"], parse_configs(None))
    with pytest.raises(UserError) as refused:
        run_on_ray(plan, tmp_path / "out", threads=3)
    assert str(refused.value) == ("runs of llamacpp:qwen2.5-coder-1.5b ask for 3 CPUs (llama.cpp threads) but the "
                                  "largest Ray node has 2: use --threads 2")


def test_a_worker_that_cannot_load_the_embedded_model_stops_the_eval_naming_its_host(cluster, tmp_path):
    missing = tmp_path / "nowhere" / "model.gguf"
    plan = EvalPlan("shouts", shouts(tmp_path / "tasks", 2), [f"llamacpp:{missing}"], parse_configs(None))
    with pytest.raises(UserError) as refused:
        run_on_ray(plan, tmp_path / "out", threads=1)
    assert str(refused.value).startswith(f"on {socket.gethostname()}: no model file at {missing}")
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_a_folder_of_jobs_runs_on_ray_from_the_command_line_and_from_bundles(cluster, tmp_path):
    suite_dir = tmp_path / "mine"
    for job in (FIX, ADD):
        write_job(suite_dir, job)
    replies = write_replies(tmp_path / "replies", {"calc_fix": [FIXED], "calc_add": [SQUARE]})
    address = ray.get_runtime_context().gcs_address  # the command joins the test's cluster
    proc = subprocess.run([sys.executable, "-m", "pyharness.cli", "eval", str(suite_dir), "--on", "ray",
                           "--ray-address", address, "--model", f"scripted:{replies}", "--configs", "protocol=oneshot",
                           "--out", str(tmp_path / "cli")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[2/2]" in proc.stderr and "pass@1" in proc.stdout
    by_task = {r["task"]: r for r in lines(tmp_path / "cli")}
    assert by_task["calc_fix"]["note"] == "tests/test_ops.py: 3 passed" and by_task["calc_fix"]["pass_strict"]
    assert by_task["calc_add"]["pass_strict"] and by_task["calc_add"]["suite"] == "mine"
    # as on a machine without the driver's disk: the job folders travel packed and the workers unpack them
    from pyharness.evals.bundles import pack

    suite = load_suite(str(suite_dir))
    unpacked = [Path(tempfile.gettempdir()) / "ph-ray-bundles" / pack(task.root)[0] for task in suite.tasks]
    plan = EvalPlan("mine", suite.tasks, [f"scripted:{replies}"], parse_configs(["protocol=oneshot"]))
    try:
        fanned = run_on_ray(plan, tmp_path / "shipped", ship=True)
        assert all(folder.is_dir() and (folder / "job.json").is_file() for folder in unpacked)
    finally:
        for folder in unpacked:
            shutil.rmtree(folder, ignore_errors=True)
    assert [comparable(r) for r in sorted(fanned.written, key=lambda r: r["order"])] == \
        [comparable(r) for r in sorted(by_task.values(), key=lambda r: r["order"])]
