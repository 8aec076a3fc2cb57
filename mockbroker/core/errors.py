"""The one exception the core raises for a request Kafka would refuse.

Every refusal in the core (a topic that cannot be created, a batch the log will not take, a
member the coordinator does not know) carries the Kafka error code the client must see, and
optionally the error message Kafka writes beside it.  Handlers catch :class:`ApiException` and
put ``error_code`` (and, where the response has one, ``message``) where the API expects them.
"""

from __future__ import annotations

from wire import errors

#: the longest error message a refusal carries (in characters; well within a Kafka string)
MAX_MESSAGE_CHARS = 1000


class ApiException(Exception):
    """A request refused with Kafka's ``error_code``; ``message`` is what Kafka would write in
    the response's error message field (often nothing)."""

    def __init__(self, error_code: int, message: str = ""):
        if len(message) > MAX_MESSAGE_CHARS:
            # A message quoting what the client sent (a name near the 32767-byte limit of a
            # string) could outgrow every response that carries it: it is cut.
            message = f"{message[:MAX_MESSAGE_CHARS]}..."
        super().__init__(message or errors.error_by_code(error_code).name)
        self.error_code = error_code
        self.message = message

    def __repr__(self) -> str:
        return f"ApiException({errors.error_by_code(self.error_code).name}, {self.message!r})"
