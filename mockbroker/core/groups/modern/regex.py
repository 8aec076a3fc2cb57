r"""Subscription regular expressions in the syntax Kafka accepts (Google's RE2, through RE2J),
matched with Python's ``re``.

RE2 is mostly a subset of what ``re`` accepts: it has no lookaround and no backreferences,
which :func:`compile_topic_regex` refuses as RE2J does, and its ``\Q...\E`` quoting and
letter and digit classes (``\pL``, ``\p{N}``) are translated; other Unicode classes are
refused.  A pattern either engine refuses is :class:`TopicRegexError`, whose text is RE2J's
description of the error (what Kafka puts in its INVALID_REGULAR_EXPRESSION message).  Kafka
matches a regex against the whole topic name, as ``fullmatch`` does.
"""

from __future__ import annotations

import functools
import re

#: RE2J's descriptions of its syntax errors
MISSING_BRACKET = "missing closing ]"
MISSING_PAREN = "missing closing )"
INTERNAL_ERROR = "regexp/syntax: internal error"
INVALID_REPEAT_SIZE = "invalid repeat count"
MISSING_REPEAT_ARGUMENT = "missing argument to repetition operator"
INVALID_PERL_OP = "invalid or unsupported Perl syntax"
INVALID_ESCAPE = "invalid escape sequence"
TRAILING_BACKSLASH = "trailing backslash at end of expression"
INVALID_REPEAT_OP = "invalid nested repetition operator"
INVALID_CHAR_RANGE = "invalid character class range"

#: the start of ``re``'s message -> RE2J's description of the same error
_FROM_PYTHON = (
    ("unterminated character set", MISSING_BRACKET),
    ("missing ), unterminated subpattern", MISSING_PAREN),
    ("unbalanced parenthesis", INTERNAL_ERROR),  # what RE2J 1.8 says of a stray ")"
    ("nothing to repeat", MISSING_REPEAT_ARGUMENT),
    ("multiple repeat", INVALID_REPEAT_OP),
    ("bad character range", INVALID_CHAR_RANGE),
    ("min repeat greater than max repeat", INVALID_REPEAT_SIZE),
    ("bad escape (end of pattern)", TRAILING_BACKSLASH),
    ("bad escape", INVALID_ESCAPE),
    ("unknown extension", INVALID_PERL_OP),
)
#: what RE2 leaves out of ``re``'s syntax: lookaround, and backreferences (also named ones)
_UNSUPPORTED = re.compile(r"\(\?(?:=|!|<=|<!|P=)|\\[1-9]")


class TopicRegexError(ValueError):
    """The pattern is not a regular expression Kafka accepts; the text is RE2J's."""


@functools.lru_cache(maxsize=256)
def compile_topic_regex(pattern: str) -> re.Pattern:
    translated = _to_python(pattern)
    found = _UNSUPPORTED.search(_escapes_blanked(translated))
    if found is not None:
        raise TopicRegexError(INVALID_ESCAPE if found.group().startswith("\\")
                              else INVALID_PERL_OP)
    try:
        return re.compile(translated)
    except re.error as exc:
        message = str(exc.msg)
        for start, description in _FROM_PYTHON:
            if message.startswith(start):
                raise TopicRegexError(description) from None
        raise TopicRegexError(message) from None


def _escapes_blanked(pattern: str) -> str:
    """The pattern with escaped characters other than digits blanked, so a literal ``\\(?=``
    is not taken for lookahead (digits stay: ``\\1`` is a backreference)."""
    return re.sub(r"\\([^1-9])", "__", pattern)


#: RE2's Unicode classes that ``re`` spells otherwise (letters, digits; ``\P``: not them)
_UNICODE_CLASSES = {"L": r"[^\W\d_]", "N": r"\d", "Nd": r"\d"}
_NOT_UNICODE_CLASSES = {"L": r"[\W\d_]", "N": r"\D", "Nd": r"\D"}
_RE2_ONLY = re.compile(r"\\Q(.*?)(?:\\E|$)|\\([pP])(?:\{(\w+)\}|(\w))|\\.", re.S)


def _to_python(pattern: str) -> str:
    r"""RE2 syntax ``re`` lacks, in ``re``'s terms: ``\Q...\E`` quoting, and the letter and
    digit classes ``\pL``, ``\p{N}`` (and their ``\P`` negations)."""
    def replace(match: re.Match) -> str:
        if match.group(0).startswith("\\Q"):
            return re.escape(match.group(1))
        if match.group(2):
            name = match.group(3) or match.group(4)
            table = _UNICODE_CLASSES if match.group(2) == "p" else _NOT_UNICODE_CLASSES
            if name in table:
                return table[name]
        return match.group(0)
    return _RE2_ONLY.sub(replace, pattern)
