"""Code the test directories share: pytest plugins (fixtures and hooks) and helpers.

Each plugin module is listed in the top-level conftest's `pytest_plugins`, so its fixtures are
available to every test directory and every directory's tests run on their own. Helpers are
imported by their qualified name (`from testkit.rest import Api`); `tests/` is on `sys.path`
through pytest's `pythonpath` setting in pyproject.toml. Nothing here imports a test module.
"""
