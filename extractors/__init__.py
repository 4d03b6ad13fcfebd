"""total-recall: extractors layer."""
