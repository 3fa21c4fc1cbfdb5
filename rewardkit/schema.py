"""``rewardkit.schema``: the public face of result schemas (defined in
``rewardkit.runtime.define.schema``): the extras keys a reward's results carry, known before
its first call, which every adapter and ``rewardkit serve`` give each sample."""

from __future__ import annotations

from rewardkit.runtime.define.schema import ResultSchema, ResultSchemaError, result_schema

__all__ = ["ResultSchema", "ResultSchemaError", "result_schema"]
