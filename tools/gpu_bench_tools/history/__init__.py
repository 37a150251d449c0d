"""Nightly history: ingest runs into one store (store; SQLite or PostgreSQL by dburl), read series back,
check them for change points (check) and write them out (render)."""
