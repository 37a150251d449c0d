"""Nightly history: ingest runs into one store (store; SQLite or PostgreSQL by dburl), read series back,
check each case against its own nights (check), replay runs as nights (replay) and write them out (render)."""
