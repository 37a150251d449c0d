"""Nightly history: ingest runs into one store (store; SQLite or PostgreSQL by dburl), read series back,
check each case against its own nights (check), and write them out (render)."""
