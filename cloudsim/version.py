"""The version of cloudsim, in a module of its own so that any part of the package can name it
(results record it) without importing the package's whole public surface."""

__version__ = "0.1.0"
