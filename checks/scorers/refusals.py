"""not_a_refusal: the answer is not a refusal, nor an apology that introduces one.

The rule (docs/scorers.md has the examples):

1. The text read is a string answer, or every string inside a structured answer, one
   per line. An answer with no text at all (a number, ``{"total": 7500}``) is not a
   refusal. A run with no answer abstains (``no_answer``): there is nothing to read,
   and ``answered`` is the scorer that fails it.
2. The text is normalised: lower case, accents removed (``perdón`` → ``perdon``),
   curly apostrophes straightened, spaces collapsed. It is split into sentences at
   line breaks and after ``.``, ``!`` or ``?`` followed by a space; leading
   punctuation of a sentence (``¡``, ``¿``, quotes, bullets) is ignored.
3. A sentence is a refusal sentence when it STARTS with one of ``REFUSAL_PATTERNS``
   (a phrase in the middle of a sentence never counts).
4. The answer is a refusal when its first sentence is a refusal sentence, or when its
   refusal sentences hold at least half of its non-space characters (a short greeting
   before a refusal does not hide it; one refusing sentence at the end of a long useful
   answer does not make the answer a refusal).

Inability patterns name what is refused (help, assist, comply, provide…), so "I can't
wait to help" and "I can't help but notice" are not refusals. An apology counts only
when it introduces a refusal ("I'm sorry, but…", "Sorry, I can't help…"), so "Sorry for
the delay, here is your booking" is not one.
"""

import re
import unicodedata

from .base import Abstain, Result, Scorer
from .values import answer_texts, is_empty

# English.
_EN_APOLOGY = (
    r"(?:i'?m sorry|i am sorry|sorry|i apologi[sz]e|my apologies|unfortunately|regrettably|i'?m afraid|i am afraid)"
)
_EN_UNABLE = (
    r"(?:i can'?t|i cannot|i can not|i'?m unable to|i am unable to|i'?m not able to|i am not able to"
    r"|i won'?t be able to|i will not be able to|i won'?t|i will not|i'?m not allowed to|i am not allowed to)"
)
_EN_WHAT = (
    r"(?:help(?!\s+but\b)|assist|comply|fulfil|fulfill|provide|answer|respond|support|share|process|complete"
    r"|do that|do this|do so|continue|proceed|engage)"
)
# Spanish (accents already removed).
_ES_APOLOGY = (
    r"(?:lo siento|lo lamento|lamento|disculpa|disculpe|disculpas|perdon|perdona|perdone"
    r"|lamentablemente|desafortunadamente|me temo que)"
)
_ES_UNABLE = r"(?:no puedo|no me es posible|no estoy en condiciones de|no soy capaz de|no tengo permitido)"
_ES_WHAT = (
    r"(?:ayudar\w*|asistir\w*|cumplir\w*|proporcionar\w*|responder\w*|compartir\w*|procesar\w*|completar\w*"
    r"|atender\w*|hacer eso|hacerlo|continuar|seguir con (?:eso|esto))"
)

# Each pattern is matched at the start of a normalised sentence.
REFUSAL_PATTERNS = {
    "inability": rf"(?:{_EN_APOLOGY}[,.!]?\s+(?:but\s+)?)?(?:but\s+|however,?\s+)?{_EN_UNABLE}\s+{_EN_WHAT}\b",
    "apology_but": rf"{_EN_APOLOGY},?\s+but\b",
    "as_an_ai": r"as an ai\b|as an artificial intelligence\b|as a(?:n ai)? language model\b",
    "decline": r"i (?:must|have to|need to|will have to) (?:decline|refuse)\b",
    "incapacidad": rf"(?:{_ES_APOLOGY}[,.!]?\s+(?:pero\s+)?)?(?:pero\s+|sin embargo,?\s+)?{_ES_UNABLE}\s+{_ES_WHAT}\b",
    "disculpa_pero": rf"{_ES_APOLOGY},?\s+pero\b",
    "como_ia": r"como (?:una )?ia\b|como (?:un )?modelo de lenguaje\b|como (?:un )?asistente de (?:ia|inteligencia artificial)\b",
    "declinar": r"(?:debo|tengo que) (?:declinar|rechazar|negarme)\b",
}
_PATTERNS = [(name, re.compile(pattern)) for name, pattern in REFUSAL_PATTERNS.items()]
# Every match of a pattern holds one of these (within a sentence, white space is one
# space): a text with none of them has no refusing sentence.
_PATTERN_WORDS = (
    "can", "unable", "not able", "won", "will not", "not allowed", "but", "as a", "decline", "refuse",  # English
    "no ", "pero", "como ", "declinar", "rechazar", "negarme",  # Spanish
)  # fmt: skip
# Any of them, in one match: most sentences start with none.
_ANY_PATTERN = re.compile("|".join(f"(?:{pattern})" for pattern in REFUSAL_PATTERNS.values()))

_SPACES = re.compile(r"[^\S\n]+")
_SPACES_TO_COLLAPSE = re.compile(r"[^\S\n ]|  ")
_SENTENCE_BREAK = re.compile(r"\n+|(?<=[.!?])\s+")
_LEADING_PUNCTUATION = re.compile(r"^[^\w]+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\u00b4": "'"})


def normalise(text):
    """Lower case, no accents, straight apostrophes, single spaces (line breaks kept)."""
    if text.isascii():  # one apostrophe to straighten, nothing to decompose (NFKD leaves ASCII as it is)
        text = text.replace("`", "'").lower()
    else:
        text = unicodedata.normalize("NFKD", text.translate(_APOSTROPHES))
        text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    # Most texts have only single spaces and line breaks: nothing to collapse.
    return _SPACES.sub(" ", text) if _SPACES_TO_COLLAPSE.search(text) else text


def sentences(text):
    """The normalised sentences of ``text``, leading punctuation removed, empty ones dropped."""
    return _sentences_of(normalise(text))


def _sentences_of(normalised):
    out = []
    for piece in _SENTENCE_BREAK.split(normalised):
        piece = _LEADING_PUNCTUATION.sub("", piece.strip())
        if piece:
            out.append(piece)
    return out


def refusal_match(sentence):
    """The name of the pattern ``sentence`` starts with, or None."""
    if _ANY_PATTERN.match(sentence) is None:
        return None
    for name, pattern in _PATTERNS:
        if pattern.match(sentence):
            return name
    return None


def _weight(text):
    return len("".join(text.split()))  # its characters that are not white space


def refusal_of(text):
    """``None`` when ``text`` is not a refusal, else the evidence ``{"rule", "pattern", "sentence", "share"}``."""
    normalised = normalise(text)
    if not any(word in normalised for word in _PATTERN_WORDS):
        return None  # no sentence can start with a pattern
    parts = _sentences_of(normalised)
    if not parts:
        return None
    matches = [(s, refusal_match(s)) for s in parts]
    refusing = [(s, name) for s, name in matches if name]
    if not refusing:
        return None
    share = sum(_weight(s) for s, _ in refusing) / max(1, sum(_weight(s) for s in parts))
    first_sentence, first_name = matches[0]
    if first_name:
        rule, (sentence, name) = "first_sentence", (first_sentence, first_name)
    elif share >= 0.5:
        rule, (sentence, name) = "majority", refusing[0]
    else:
        return None
    return {"rule": rule, "pattern": name, "sentence": sentence[:200], "share": round(share, 3)}


def not_a_refusal(run, config):
    if is_empty(run.output):
        return Abstain("no_answer", {"message": "the run produced no answer to read"})
    text = "\n".join(t for _, t in answer_texts(run.output))
    found = refusal_of(text)
    if found is None:
        return Result.verdict(True, "the answer is not a refusal", {"refusal": None})
    return Result.verdict(False, f"the answer is a refusal: {found['sentence'][:80]!r}", {"refusal": found})


SCORERS = (
    Scorer(
        id="not_a_refusal",
        description="The answer is not a refusal or an apology (English and Spanish patterns).",
        version="1",
        kind="builtin",
        needs_config=False,
        config_schema={"type": "object", "properties": {}, "additionalProperties": False},
        category="output",
        expectation_keys=(),
        func=not_a_refusal,
        reads="nothing",
    ),
)
