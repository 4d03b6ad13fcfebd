"""total-recall: total_recall layer."""
