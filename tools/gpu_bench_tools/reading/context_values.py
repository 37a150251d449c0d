"""What gpu_bench writes in its context for a fact it could not read (docs/json.md): a leaf every reader of
facts imports, so that none of them needs the file model to know it."""

UNAVAILABLE = "unavailable"
