"""not_a_refusal: English and Spanish refusal patterns at the start of a sentence."""

import pytest

from checks.scorers import Abstain, run_from_payload, score_run, scorer_get


def _refusal(output):
    return score_run(scorer_get("not_a_refusal"), run_from_payload({"trace_id": "t1", "output": output}), {})


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, but I can't help with that.",
        "I can't help with booking rooms for other members.",
        "I cannot assist with this request.",
        "Sorry, I'm unable to provide that information.",
        "I’m sorry, but I can’t do that.",  # curly apostrophes
        "Unfortunately, I cannot complete that booking.",
        "As an AI, I don't have access to the calendar.",
        "As an AI language model, I cannot book rooms.",
        "I must decline this request.",
        "I won't be able to help with that today.",
        "no puedo ayudarte con eso.",
        "Lo siento, pero no es posible reservar esa sala.",
        "Lo siento, no puedo ayudarte con esa reserva.",
        "Perdón, pero no tengo acceso a tu cuenta.",
        "Como IA, no tengo acceso al calendario.",
        "Lamentablemente, no puedo completar la reserva.",
    ],
)
def test_it_fails_a_refusal(answer):
    result = _refusal(answer)
    assert (result.passed, result.value) == (False, 0.0), result.detail
    assert result.detail["refusal"]["rule"] == "first_sentence"


@pytest.mark.parametrize(
    "answer",
    [
        "I can't wait to help you with your booking!",
        "I can't help but notice you booked Focus twice.",
        "Sorry for the delay, here is your booking: Focus pro, 3h.",
        "I'm sorry for the wait. Your quote is 7500 cents.",
        "Your booking is confirmed, and I cannot stress enough how nice Focus is.",
        "The agent said: I can't help with that.",  # not at the start of a sentence
        "Lo siento por la demora, aquí está tu reserva.",
        "No puedo esperar a ayudarte con la reserva.",
        "Disculpa la demora, pero ya tienes tu reserva.",
        "Reservé Focus pro 3h para Ana.",
    ],
)
def test_it_passes_a_near_miss_that_is_not_a_refusal(answer):
    result = _refusal(answer)
    assert (result.passed, result.value) == (True, 1.0), result.detail


def test_it_fails_a_refusal_hidden_behind_a_short_greeting():
    result = _refusal("Hi Ana! I'm sorry, but I can't book that room because it is taken all day.")
    assert not result.passed
    assert result.detail["refusal"]["rule"] == "majority"
    assert result.detail["refusal"]["pattern"] == "apology_but"


def test_it_fails_a_refusal_after_an_apology_that_stands_alone():
    result = _refusal("¡Lo siento! No puedo ayudar con cancelaciones.")
    assert not result.passed
    assert result.detail["refusal"]["pattern"] == "incapacidad"


def test_it_passes_a_useful_answer_that_ends_with_a_short_refusal():
    answer = (
        "Booked Focus pro for 3 hours for Ana on Friday at 10:00, total 7500 cents, reference ABC123. "
        "I cannot assist with invoices."
    )
    assert _refusal(answer).passed


def test_it_fails_an_answer_that_is_mostly_refusal_after_a_useful_first_line():
    answer = "Hola.\nLo siento, pero no puedo reservar salas para otros miembros ni modificar reservas ajenas."
    result = _refusal(answer)
    assert not result.passed
    assert result.detail["refusal"]["rule"] == "majority"


def test_it_reads_the_strings_inside_a_structured_answer():
    assert not _refusal({"message": "I'm sorry, but I can't help with that."}).passed
    assert _refusal({"total_cents": 7500}).passed


def test_it_quotes_the_refusing_sentence_in_the_reason_and_detail():
    result = _refusal("I cannot assist with this request.")
    assert result.reason == "the answer is a refusal: 'i cannot assist with this request.'"
    assert result.detail["refusal"] == {
        "rule": "first_sentence",
        "pattern": "inability",
        "sentence": "i cannot assist with this request.",
        "share": 1.0,
    }


def test_it_abstains_on_a_run_with_no_answer():
    assert _refusal(" ") == Abstain("no_answer", {"message": "the run produced no answer to read"})
