"""ask's acceptance rule: the cited path:line exists and holds a fact the answer states; else the real lines."""

from pyharness.loop.citations import stated

READ = 'Action: read {"path": "orders/tax.py"}'


def answer(text: str) -> str:
    return f'Action: answer {{"text": "{text}"}}'


def turns_of(records):
    return [r for r in records if r["event"] == "turn"]


def test_the_right_line_is_accepted_and_the_verdict_names_it(orders, drive):
    result, _ = drive(orders("ask"), "ask", "rate?", [READ, answer("The books rate is 0.05 (orders/tax.py:9).")])
    assert result.outcome == "done"
    assert result.reason == "answer cites orders/tax.py:9, which holds 0.05"


def test_a_neighbouring_line_and_a_percentage_are_accepted(orders, drive):
    result, _ = drive(orders("ask"), "ask", "rate?", [READ, answer("Books are taxed at 5% (orders/tax.py:10).")])
    assert result.outcome == "done", result.reason


def test_a_line_without_the_number_is_refused_with_the_real_lines(orders, drive):
    result, records = drive(orders("ask"), "ask", "rate?", [
        READ,
        answer("The tax rate for books is 0.05 (orders/tax.py:16)."),
        answer("The tax rate for books is 0.05 (orders/tax.py:9)."),
    ])
    refused = turns_of(records)[1]["observation"]
    assert refused.startswith("Error: not accepted: orders/tax.py:16 does not hold 0.05.")
    assert "Lines 13-19 of orders/tax.py:" in refused
    assert "  16|         raise UnknownCategoryError(" in refused and "  13| def tax_rate(" in refused
    assert "  12|" not in refused and "  20|" not in refused
    assert 'If orders/tax.py:9 is the source, reply:' in refused
    assert refused.endswith('Action: answer {"text": "The tax rate for books is 0.05 (orders/tax.py:9)."}')
    assert result.outcome == "done" and result.steps == 3


def test_a_name_on_the_wrong_line_does_not_count_when_the_number_is_missing(orders, drive):
    # TAX_RATES is on line 15 (next to 16), but the stated rate is not: the number decides
    result, records = drive(orders("ask"), "ask", "rate?",
                            [READ, answer("TAX_RATES gives books 0.05, see orders/tax.py:16")], max_steps=2)
    assert result.outcome == "stopped"
    assert "does not hold 0.05" in turns_of(records)[1]["observation"]


def test_a_line_past_the_end_of_the_file_is_refused(orders, drive):
    result, records = drive(orders("ask"), "ask", "rate?", [READ, answer("It is 0.05 (orders/tax.py:90).")],
                            max_steps=2)
    refused = turns_of(records)[1]["observation"]
    assert result.outcome == "stopped"
    assert refused.startswith("Error: not accepted: orders/tax.py:90 does not exist (orders/tax.py has 27 lines).")
    assert "  27|     return round(sum(line_tax(line) for line in lines), 2)" in refused


def test_a_bare_citation_must_say_what_the_line_shows(orders, drive):
    result, records = drive(orders("ask"), "ask", "rate?", [READ, answer("orders/tax.py:9")], max_steps=2)
    refused = turns_of(records)[1]["observation"]
    assert result.outcome == "stopped"
    assert "the answer must say what the cited line shows" in refused and '   9|     "books": 0.05,' in refused


def test_a_path_without_a_line_gets_the_line_that_holds_the_fact(orders, drive):
    result, records = drive(orders("ask"), "ask", "rate?", [READ, answer("orders/tax.py sets 0.05")], max_steps=2)
    refused = turns_of(records)[1]["observation"]
    assert "cite the line too" in refused
    assert refused.endswith('Action: answer {"text": "orders/tax.py:9 sets 0.05"}')


def test_names_and_quoted_text_count_as_facts(orders, drive):
    result, _ = drive(orders("ask"), "ask", "where?", [
        READ, answer("`tax_rate()` raises 'no tax rate for category' (orders/tax.py:16)")])
    assert result.outcome == "done", result.reason
    facts = stated("line.total() at orders/tax.py:22 and TAX_RATES, e.g. the word rate", {"orders/tax.py"})
    assert facts.names == {"line", "total", "TAX_RATES"} and not facts.numbers
