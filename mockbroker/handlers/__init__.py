"""One module per API.  Each registers the versions it serves on :data:`REGISTRY`, from which
ApiVersions is built, so a version without a handler can never be advertised."""

from wire.registry import ApiRegistry

REGISTRY = ApiRegistry()

from mockbroker.handlers import api_versions  # noqa: E402,F401  (registers itself)
