"""rewardkit language server (filled by the LSP work)."""
