"""The package's version, in one place (``evalgate --version``, the User-Agent, pyproject.toml)."""

__version__ = "1.0.0"
