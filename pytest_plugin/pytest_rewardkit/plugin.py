"""pytest entry point (``pytest11``) of rewardkit: golden files, fixtures and options."""
