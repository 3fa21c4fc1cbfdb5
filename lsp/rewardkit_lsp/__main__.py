"""``python -m rewardkit_lsp``: start the language server (stdio unless ``--tcp``)."""

import sys

from rewardkit_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
