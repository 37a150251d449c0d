"""Statistics: tests of difference, the noise of a median, and the between-run floors for files of one round
(between_run_floor.toml)."""
