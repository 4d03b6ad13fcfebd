"""total-recall: index layer."""
