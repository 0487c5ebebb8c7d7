"""A run's input holds its case's input, read with whitespace and case folded (checks.input_match is pure)."""

from checks.input_match import input_contains


def test_it_finds_the_cases_input_inside_a_prompt_whatever_the_case_and_spacing():
    assert input_contains(
        "System: book rooms.\nUser: ¿Cuánto cuesta FOCUS pro   3 horas?", "¿cuánto cuesta focus pro 3 horas?"
    )


def test_it_does_not_find_another_questions_input():
    assert not input_contains("¿Cuánto cuesta Studio basic 1 hora?", "¿Cuánto cuesta Focus pro 3 horas?")


def test_it_reads_a_structured_input_as_its_json_text_whatever_the_key_order():
    assert input_contains({"room": "Focus", "hours": 3}, {"hours": 3, "room": "focus"})
    assert not input_contains({"room": "Focus", "hours": 3}, {"room": "Focus", "hours": 4})


def test_it_holds_a_case_with_no_input_in_every_run():
    assert input_contains("anything", None) and input_contains(None, "  ")
