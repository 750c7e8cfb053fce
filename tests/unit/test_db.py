"""Engines: SQLite connections opened together on a new file all come up in WAL mode."""

import threading

import sqlalchemy as sa

from chops.db import make_engine


def test_connections_opening_a_new_file_together_all_switch_it_to_wal(tmp_path):
    # Six connections switching one new file to WAL at once: without the retry, SQLite answered
    # "database is locked" (its deadlock avoidance skips the busy handler) in about one file of six.
    for i in range(40):
        url = f"sqlite:///{tmp_path / f'f{i}.db'}"
        engines = [make_engine(url) for _ in range(6)]
        gate, errors, modes = threading.Barrier(len(engines)), [], []

        def open_one(engine):
            gate.wait()
            try:
                with engine.connect() as conn:
                    modes.append(conn.exec_driver_sql("PRAGMA journal_mode").scalar())
            except sa.exc.OperationalError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=open_one, args=(e,)) for e in engines]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        for e in engines:
            e.dispose()
        assert errors == [] and modes == ["wal"] * len(engines), (i, errors)
