"""rewardkit's code grader: a response's program run against a data set's tests, only inside a sandbox.

Pipeline: extraction -> test formats -> sandboxed runs (``rewardkit.code.sandbox``) -> comparison
on the host (see docs/code.md).
"""
