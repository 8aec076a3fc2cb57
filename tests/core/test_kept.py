"""``Kept``: values worked out once and kept until their state changes; one whose working out
changed that state is handed back but not kept."""

from __future__ import annotations

from mockbroker.core.kept import Kept


def test_a_value_is_worked_out_once_until_the_state_changes():
    kept, calls = Kept(), []

    def compute():
        calls.append(1)
        return len(calls)

    assert [kept.get("a", compute), kept.get("a", compute)] == [1, 1]
    assert kept.get("b", compute) == 2  # each key its own
    kept.changed()
    assert kept.get("a", compute) == 3 and kept.get("a", compute) == 3
    assert len(calls) == 3


def test_a_value_whose_working_out_changed_the_state_is_not_kept():
    kept = Kept()
    answers = iter(["made while creating a topic", "after it"])

    def compute():
        value = next(answers)
        if value.startswith("made"):
            kept.changed()  # e.g. a Metadata request that auto-created its topic
        return value

    assert kept.get("m", compute) == "made while creating a topic"
    assert kept.get("m", compute) == "after it"
    assert kept.get("m", compute) == "after it"  # kept from then on


def test_a_bounded_table_starts_afresh_once_full():
    kept = Kept(limit=2)
    made = []

    def make(value):
        return lambda: made.append(value) or value

    assert [kept.get(k, make(k)) for k in ("a", "b", "a")] == ["a", "b", "a"]
    assert made == ["a", "b"]  # "a" kept while there was room
    assert kept.get("c", make("c")) == "c"  # full: the table starts again with "c"
    assert kept.get("a", make("a")) == "a" and made == ["a", "b", "c", "a"]
