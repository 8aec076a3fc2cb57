"""The package version, written only here: pyproject.toml reads it for the distribution's
metadata (``[tool.setuptools.dynamic]``, without importing the package), ``mockbroker
--version`` prints it.  A leaf module, so that any layer can read it without importing the
package root (which re-exports MockCluster, and so the io layer)."""

__version__ = "0.1.0"
