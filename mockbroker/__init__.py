"""mockbroker: a Kafka-wire-compatible mock broker for integration tests.

The package's names are loaded on first use (PEP 562): ``import mockbroker`` — which every
``import mockbroker.<module>`` runs first, the CLI's and the pytest plugin's included — costs
nothing beyond the version, and ``from mockbroker import MockCluster`` imports the broker then.
"""

from __future__ import annotations

from importlib import import_module

from mockbroker import _version

# typing.TYPE_CHECKING without importing typing, which costs a millisecond
TYPE_CHECKING = False

if TYPE_CHECKING:  # what type checkers and IDEs see; the same names __getattr__ loads
    from mockbroker.admin import AdminClient, AdminError, WaitTimeout  # noqa: F401
    from mockbroker.core.control.rules import DISCONNECT  # noqa: F401
    from mockbroker.mock_cluster import MockCluster  # noqa: F401

__version__ = _version.__version__

__all__ = ["AdminClient", "AdminError", "DISCONNECT", "MockCluster", "WaitTimeout"]

#: each exported name, with the module that defines it
_EXPORTS = {
    "AdminClient": "mockbroker.admin",
    "AdminError": "mockbroker.admin",
    "WaitTimeout": "mockbroker.admin",
    "DISCONNECT": "mockbroker.core.control.rules",
    "MockCluster": "mockbroker.mock_cluster",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
