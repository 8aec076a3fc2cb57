"""pytest integration for mockbroker (registered through the ``pytest11`` entry point)."""
