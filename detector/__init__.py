"""total-recall: detector layer."""
