"""Rewards for a search agent, written against AgentFly's runtime."""

from agentfly.rewards import reward


async def judge_relevance(text: str) -> float:
    """A stand-in for an LLM judge call."""
    return float(bool(text))


@reward(name="search_f1")
def search_f1(final_response, answer, trajectory=None):
    """Token F1 of the final answer, with a bonus for short trajectories."""
    tokens, gold = final_response.lower().split(), answer.lower().split()
    common = len(set(tokens) & set(gold))
    if not common:
        return 0.0
    bonus = 0.1 if len(trajectory or []) < 5 else 0.0
    return min(1.0, 2 * common / (len(tokens) + len(gold)) + bonus)


@reward(name="judged")
async def judged(final_response, context):
    env = await context.acquire_resource("search")
    relevance = judge_relevance(final_response)
    return {
        # the judge's opinion
        "relevance": relevance,
        "env": str(env),
    }


@reward(name="exact")
def exact(final_response, answer):
    return float(final_response.strip() == answer.strip())
