"""The package version, in a leaf module so that any layer can read it without importing the
package root (which re-exports MockCluster, and so the io layer)."""

__version__ = "0.1.0"
