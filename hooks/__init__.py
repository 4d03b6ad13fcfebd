"""total-recall: hooks layer."""
