"""The loop driven by the scripted model on real copies of demo/orders: real files, real pytest, real git."""

import json
import subprocess
import sys

FIX_EDIT = (
    'Thought: the threshold should include 10\nAction: edit {"path": "orders/pricing.py"}\n'
    "<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n=======\n"
    "    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE"
)


def test_ask_happy_path(orders, drive):
    repo = orders("ask")
    result, records = drive(
        repo,
        "ask",
        "Which file defines the tax rate for books?",
        [
            'Action: read("orders/tax.py")',
            'Action: answer {"text": "orders/tax.py:9 sets the books rate to 0.05"}',
        ],
    )
    assert result.outcome == "done"
    assert result.answer == "orders/tax.py:9 sets the books rate to 0.05"
    turns = [r for r in records if r["event"] == "turn"]
    assert [t["action"]["name"] for t in turns] == ["read", "answer"]
    assert "0.05" in turns[0]["observation"]
    assert turns[0]["interventions"] == [{"kind": "parse.call_syntax", "detail": "read"}]
    assert records[0]["event"] == "start" and records[-1]["event"] == "end"


def test_ask_refuses_an_answer_citing_no_file_read(orders, drive):
    repo = orders("ask")
    result, records = drive(
        repo,
        "ask",
        "Which file defines the tax rate for books?",
        [
            'Action: answer {"text": "It is in orders/tax.py"}',
            'Action: read {"path": "orders/tax.py"}',
            'Action: answer {"text": "orders/tax.py:9, 0.05"}',
        ],
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert "must cite a file you read" in turns[0]["observation"]
    assert result.outcome == "done" and result.steps == 3


def test_fix_happy_path_ends_on_green_tests(orders, drive):
    repo = orders("fix")
    result, records = drive(
        repo,
        "fix",
        "",
        [
            'Action: read {"path": "orders/pricing.py"}',
            FIX_EDIT,
            "Action: run_tests()",
        ],
    )
    assert result.outcome == "done", result.reason
    assert "1 failing test(s) now pass" in result.reason
    assert "quantity >= BULK_THRESHOLD" in (repo / "orders/pricing.py").read_text()
    start = records[0]
    assert "test_bulk_discount_applies" in start["first_message"]  # the first traceback is in the task


def test_fix_premature_done_gets_the_traceback(orders, drive):
    repo = orders("fix")
    result, records = drive(
        repo,
        "fix",
        "",
        ['Action: done {"summary": "fixed"}', FIX_EDIT, 'Action: done {"summary": "fixed the threshold"}'],
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert turns[0]["observation"].startswith("Error: not done: the test suite is not green")
    assert "test_bulk_discount_applies" in turns[0]["observation"]
    assert "assert" in turns[0]["observation"]
    assert result.outcome == "done"


def test_fix_refuses_writes_to_tests(orders, drive):
    repo = orders("fix")
    before = (repo / "tests/test_pricing.py").read_text()
    result, records = drive(
        repo,
        "fix",
        "",
        [
            'Action: write {"path": "tests/test_pricing.py", "content": "def test_ok():\\n    pass\\n"}',
        ],
        max_steps=1,
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert "test or test config file" in turns[0]["observation"]
    assert (repo / "tests/test_pricing.py").read_text() == before
    assert result.outcome == "stopped"


def test_add_happy_path_needs_a_test_that_fails_on_old_code(orders, drive, demo_jobs):
    repo = orders("add")
    impl = demo_jobs["add"]["reference"][0]["replace"]
    test = (
        "from orders.shipping import shipping_cost\n\n\ndef test_shipping():\n    assert shipping_cost(3.5) == 7.25\n"
    )
    result, records = drive(
        repo,
        "add",
        demo_jobs["add"]["task"],
        [
            f'Action: write {{"path": "tests/test_shipping.py"}}\n```python\n{test}```',
            f'Action: write {{"path": "orders/shipping.py"}}\n```python\n{impl}```',
            "Action: run_tests {}",
        ],
    )
    assert result.outcome == "done", result.reason
    assert "fails on the old code" in result.reason
    assert (repo / "orders/shipping.py").read_text() == impl


def test_run_happy_path(orders, drive, demo_jobs):
    repo = orders("run")
    result, _ = drive(
        repo,
        "run",
        demo_jobs["run"]["task"],
        [
            'Action: edit {"path": "orders/tax.py"}\n<<<<<<< SEARCH\n    "food": 0.07,\n=======\n    "food": 0.08,\n'
            ">>>>>>> REPLACE",
            "Action: run_tests {}",
            'Action: done {"summary": "food rate is 0.08"}',
        ],
    )
    assert result.outcome == "done"
    assert '"food": 0.08' in (repo / "orders/tax.py").read_text()


def test_step_budget_ends_the_run_cleanly(orders, drive):
    repo = orders("ask")
    result, records = drive(
        repo,
        "ask",
        "q",
        ["Action: list {}", 'Action: read {"path": "orders/tax.py"}', 'Action: read {"path": "orders/lines.py"}'],
        max_steps=2,
    )
    assert result.outcome == "stopped"
    assert "step budget of 2" in result.reason
    assert len([r for r in records if r["event"] == "turn"]) == 2


def test_unknown_action_and_garbage_get_clear_errors(orders, drive):
    repo = orders("ask")
    result, records = drive(
        repo,
        "ask",
        "q",
        [
            'Action: frobnicate {"x": 1}',
            "I think the answer is somewhere in the code.",
            'Action: read {"path": "orders/tax.py"}',
            'Action: answer {"text": "orders/tax.py:9 holds 0.05"}',
        ],
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert "unknown action 'frobnicate'" in turns[0]["observation"]
    assert "Use one of: read, search, list, answer" in turns[0]["observation"]
    assert turns[1]["observation"].startswith("Format error: no action found")
    assert result.outcome == "done"


def test_three_bad_replies_in_a_row_stop_the_run(orders, drive):
    repo = orders("ask")
    result, records = drive(repo, "ask", "q", ["hmm", "Action: nothing_here", "still thinking", "Action: list {}"])
    assert result.outcome == "stopped"
    assert "3 replies in a row had no valid action" in result.reason
    assert len([r for r in records if r["event"] == "turn"]) == 3


def test_transcript_records_every_turn_with_tokens(orders, drive):
    repo = orders("ask")
    result, records = drive(
        repo,
        "ask",
        "q",
        [
            "Action: list {}",
            'Action: read {"path": "orders/tax.py"}',
            'Action: answer {"text": "orders/tax.py:9 0.05"}',
        ],
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert [t["step"] for t in turns] == [1, 2, 3]
    for turn in turns:
        assert turn["reply"] and turn["prompt_tokens"] > 0 and "seconds" in turn
    assert turns[0]["new_messages"][0]["role"] == "system"
    assert [m["role"] for m in turns[1]["new_messages"]] == ["assistant", "user"]
    assert records[-1]["outcome"] == "done" and records[-1]["steps"] == 3


def test_cli_scripted_run_out_of_replies_is_one_line(orders, tmp_path):
    repo = orders("ask")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(["Action: list {}"]))
    proc = subprocess.run(
        [sys.executable, "-m", "pyharness.cli", "ask", "where?", "--repo", str(repo), "--model", f"scripted:{replies}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "ph: the scripted model ran out of replies after 1 turns"


def test_cli_wrong_repo_path_is_one_line(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyharness.cli",
            "ask",
            "q",
            "--repo",
            str(tmp_path / "nope"),
            "--model",
            "scripted:x.json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"ph: repo {tmp_path / 'nope'} does not exist"


def test_uncited_answer_gets_a_literal_corrected_example(orders, drive):
    repo = orders("ask")
    result, records = drive(
        repo,
        "ask",
        "Which file defines the tax rate for books?",
        [
            'Action: read {"path": "orders/tax.py"}',
            'Action: answer {"text": "The tax rate for books is 0.05."}',
            'Action: answer {"text": "The tax rate for books is 0.05 (orders/tax.py:9)."}',
        ],
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert turns[1]["observation"].endswith(
        'Action: answer {"text": "The tax rate for books is 0.05 (orders/tax.py:9)."}'
    )
    assert result.outcome == "done" and result.steps == 3


def test_answer_path_argument_counts_as_a_citation(orders, drive):
    repo = orders("ask")
    result, _ = drive(
        repo,
        "ask",
        "q",
        [
            'Action: read {"path": "orders/tax.py"}',
            'Action: answer {"text": "It is 0.05.", "path": "orders/tax.py", "line": 9}',
        ],
    )
    assert result.outcome == "done"
    assert result.answer == "It is 0.05. (orders/tax.py:9)"


def test_copied_example_path_is_refused_with_the_real_files(orders, drive):
    repo = orders("ask")
    result, records = drive(
        repo,
        "ask",
        "q",
        [
            'Action: read {"path": "shop/cart.py"}',
            'Action: read {"path": "orders/tax.py"}',
            'Action: answer {"text": "orders/tax.py:9 holds 0.05"}',
        ],
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert turns[0]["observation"].startswith("Error: shop/cart.py is only the example in the instructions")
    assert "orders/tax.py" in turns[0]["observation"]
    assert result.outcome == "done"


def test_edit_with_a_whole_corrected_function_is_merged(orders, drive):
    repo = orders("fix")
    func = (
        'def bulk_discount(line: OrderLine) -> float:\n    """Bulk discount."""\n'
        "    if line.quantity >= BULK_THRESHOLD:\n        return round(line.total() * BULK_RATE, 2)\n"
        "    return 0.0\n"
    )
    result, records = drive(repo, "fix", "", [f'Action: edit {{"path": "orders/pricing.py"}}\n```python\n{func}```'])
    assert result.outcome == "done", result.reason
    text = (repo / "orders/pricing.py").read_text()
    assert func in text and "def order_total" in text and "def subtotal" in text
    assert records[-1]["steps"] == 1


def test_edit_by_line_range(orders, drive):
    repo = orders("fix")
    result, _ = drive(
        repo,
        "fix",
        "",
        [
            'Action: edit {"path": "orders/pricing.py", "start": 17, "end": 17}\n'
            "```python\n    if line.quantity >= BULK_THRESHOLD:\n```"
        ],
    )
    assert result.outcome == "done", result.reason
    assert (repo / "orders/pricing.py").read_text().splitlines()[16] == "    if line.quantity >= BULK_THRESHOLD:"


def test_new_test_missing_its_import_gets_it_added(orders, drive, demo_jobs):
    repo = orders("add")
    impl = demo_jobs["add"]["reference"][0]["replace"]
    result, records = drive(
        repo,
        "add",
        demo_jobs["add"]["task"],
        [
            'Action: write {"path": "tests/test_shipping.py"}\n```python\ndef test_cost():\n'
            "    assert shipping_cost(3.5) == 7.25\n```",
            f'Action: write {{"path": "orders/shipping.py"}}\n```python\n{impl}```',
        ],
    )
    turns = [r for r in records if r["event"] == "turn"]
    assert "added the missing import(s): from orders.shipping import shipping_cost" in turns[0]["observation"]
    assert (repo / "tests/test_shipping.py").read_text().startswith("from orders.shipping import shipping_cost\n")
    assert result.outcome == "done", result.reason


def test_line_range_one_off_is_widened(orders, drive):
    repo = orders("fix")
    result, _ = drive(
        repo,
        "fix",
        "",
        [
            'Action: edit {"path": "orders/pricing.py", "start": 18, "end": 19}\n'
            "```python\n    if line.quantity >= BULK_THRESHOLD:\n"
            "        return round(line.total() * BULK_RATE, 2)\n    return 0.0\n```"
        ],
    )
    assert result.outcome == "done", result.reason
    lines = (repo / "orders/pricing.py").read_text().splitlines()
    assert lines[16:19] == [
        "    if line.quantity >= BULK_THRESHOLD:",
        "        return round(line.total() * BULK_RATE, 2)",
        "    return 0.0",
    ]


def test_line_range_with_wrong_numbers_moves_to_its_anchor(orders, drive, demo_jobs):
    repo = orders("run")
    block = 'TAX_RATES = {\n    "general": 0.20,\n    "food": 0.08,\n    "books": 0.05,\n}\n'
    result, _ = drive(repo, "run", demo_jobs["run"]["task"], [
        f'Action: edit {{"path": "orders/tax.py", "start": 12, "end": 13}}\n```python\n{block}```',
        'Action: done {"summary": "food is 0.08"}',
    ])
    assert result.outcome == "done", result.reason
    text = (repo / "orders/tax.py").read_text()
    assert block in text and text.count("TAX_RATES = {") == 1 and "def tax_rate" in text


def test_time_budget_also_ends_a_long_generation(orders):
    import time

    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.loop.agent import AgentConfig
    from pyharness.loop.session import run_job
    from pyharness.loop.transcript import read_transcript
    from pyharness.models.scripted import ScriptedModel

    class SlowModel(ScriptedModel):
        def chat(self, messages, options):
            time.sleep(1.0)  # the budget runs out while this reply is being generated
            return super().chat(messages, options)

    repo = orders("ask")
    rambling = "I will think about this.\n" * 50 + 'Action: read {"path": "orders/tax.py"}'
    result = run_job(repo, "ask", "q", SlowModel(replies=[rambling]), harness=HarnessConfig.off(),
                     config=AgentConfig(max_seconds=0.8))
    assert result.outcome == "stopped" and "time budget" in result.reason
    turns = [r for r in read_transcript(__import__("pathlib").Path(result.transcript)) if r["event"] == "turn"]
    assert len(turns) == 1 and turns[0]["reply"] == "I will think about this.\n" and turns[0]["stopped_early"]


def test_a_reply_cut_by_the_time_budget_is_not_run(orders):
    import time
    from pathlib import Path

    from pyharness.loop.agent import AgentConfig
    from pyharness.loop.session import run_job
    from pyharness.loop.transcript import read_transcript
    from pyharness.models.scripted import ScriptedModel

    class SlowModel(ScriptedModel):
        def chat(self, messages, options):
            time.sleep(1.0)
            return super().chat(messages, options)

    repo = orders("run")
    half = 'Action: write {"path": "orders/report.py"}\n```python\nimport os\n'  # recorded shape: a write cut short
    result = run_job(repo, "run", "tidy pricing", SlowModel(replies=[half]), config=AgentConfig(max_seconds=0.8))
    assert result.outcome == "stopped" and "time budget" in result.reason
    assert not (repo / "orders/report.py").exists()
    turns = [r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"]
    assert turns[0]["action"] is None and turns[0]["observation"] == "(not run: the time budget ended this reply)"



def test_a_model_that_must_load_is_loaded_before_the_first_turn_and_the_view_is_told(orders):
    from pyharness.loop.session import run_job
    from pyharness.models.llamacpp import LlamaCppModel
    from pyharness.models.scripted import ScriptedModel

    class Unloaded(ScriptedModel):
        """Stands in for an in-process model (llama.cpp) whose weights are not in memory yet."""

        is_loaded = False
        loaded_at_first_turn = None

        @property
        def loaded(self):
            return self.is_loaded

        def load(self):
            self.is_loaded = True

        def chat(self, messages, options):
            if self.loaded_at_first_turn is None:
                self.loaded_at_first_turn = self.is_loaded
            return super().chat(messages, options)

    def phases(model) -> list[str]:
        events = []
        result = run_job(repo, "ask", "rate?", model, emit=lambda kind, **d: events.append((kind, d)))
        assert result.outcome == "done", result.reason
        return [d["name"] for kind, d in events if kind == "phase"]

    repo = orders("ask")
    answer = ['Action: read {"path": "orders/tax.py"}', 'Action: answer {"text": "Books pay 0.05 (orders/tax.py:9)."}']
    unloaded = Unloaded(replies=answer)
    assert phases(unloaded).count("loading model scripted") == 1 and unloaded.loaded_at_first_turn is True
    assert "loading model scripted" not in phases(ScriptedModel(replies=answer))  # a model with nothing to load
    assert not LlamaCppModel("absent.gguf", name="llamacpp:absent").loaded  # nothing is read until a run asks
