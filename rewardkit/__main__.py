"""``python -m rewardkit``: the same as the ``rewardkit`` console script."""

from rewardkit.cli import main

raise SystemExit(main())
