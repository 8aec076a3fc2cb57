"""Kafka's API names and keys, as the codec defines them."""

from __future__ import annotations

from wire.definitions import APIS

#: Kafka's API names (``"Produce"``, ``"JoinGroup"``) to keys, and back.
API_NAMES: dict[int, str] = APIS.names()
API_KEYS: dict[str, int] = {name: key for key, name in API_NAMES.items()}


def resolve_api(value: int | str) -> int:
    """An API key from a key number, its decimal string, or Kafka's name (any case)."""
    if isinstance(value, bool):
        raise TypeError("an API is a key number or a name, not a bool")
    if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
        key = int(value)
        if key not in APIS:
            raise KeyError(f"unknown API key {key}")
        return key
    if isinstance(value, str):
        wanted = value.strip().replace("_", "").replace("-", "").lower()
        for name, key in API_KEYS.items():
            if name.lower() == wanted:
                return key
        raise KeyError(f"unknown API name {value!r}")
    raise TypeError(f"an API is a key number or a name, not {type(value).__name__}")
