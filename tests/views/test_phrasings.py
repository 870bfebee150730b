"""views/phrasings: the same request asked otherwise, deterministically."""

from flowdebug.views.phrasings import phrasings

FLIGHTS = "Find flights from Paris to Tokyo on 2026-12-01"


def test_the_request_comes_first_then_one_synonym_of_each_word_in_turn():
    assert phrasings(FLIGHTS, 5) == [
        FLIGHTS,
        "Look for flights from Paris to Tokyo on 2026-12-01",
        "Find plane tickets from Paris to Tokyo on 2026-12-01",
        "Search for flights from Paris to Tokyo on 2026-12-01",
        "Find airfare from Paris to Tokyo on 2026-12-01",
    ]


def test_framings_follow_and_a_request_not_starting_with_a_verb_keeps_its_capital():
    framed = phrasings(FLIGHTS, 9)[7:]
    assert framed == [
        "Could you look for flights from Paris to Tokyo on 2026-12-01?",
        "I'd like to find plane tickets from Paris to Tokyo on 2026-12-01.",
    ]
    assert phrasings("Weather in Paris?", 5)[4] == "Hi! Forecast in Paris?"


def test_the_same_list_every_time_and_it_repeats_when_the_rules_give_fewer():
    assert phrasings("Hello there", 4) == [
        "Hello there",
        "Hi! Hello there",
        "Hello there",
        "Hi! Hello there",
    ]
    assert phrasings(FLIGHTS, 30) == phrasings(FLIGHTS, 30)
    assert phrasings("", 3) == [] and phrasings(FLIGHTS, 0) == []
