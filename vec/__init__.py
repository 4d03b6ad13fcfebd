"""total-recall: vec layer."""
