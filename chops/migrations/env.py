"""Alembic's entry to every history, the agent's and each pack's (``chops.migrate.ENVIRONMENT``): ``chops.migrate``
passes the connection and the history (never run the ``alembic`` tool on its own: ``chops db upgrade`` and
``chops db revision`` do it)."""

from chops.migrate import run_env

run_env()
