"""total-recall: lib layer."""
