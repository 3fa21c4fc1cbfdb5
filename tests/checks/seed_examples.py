"""AgentFly's seed reward examples, spelled the way users write them (checked, never imported)."""

QA_F1 = '''\
"""QA rewards."""
import re
import string
from collections import Counter

from agentfly.rewards import reward


def normalize_answer(text):
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\\b(a|an|the)\\b", " ", text)
    return " ".join(text.split())


def f1_score(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0, 0.0, 0.0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1, precision, recall


@reward(name="qa_f1_reward")
def qa_f1_reward(final_response: str, answer: str, trajectory: list) -> dict:
    """F1, EM, precision and recall of the final response against the answer."""
    f1, precision, recall = f1_score(final_response, answer)
    em = float(normalize_answer(final_response) == normalize_answer(answer))
    return {
        "reward": f1,
        "f1": f1,
        "em": em,
        "precision": precision,
        "recall": recall,
    }
'''

API_REWARD = '''\
import os

import httpx

from rewardkit import BaseReward


class APIReward(BaseReward):
    """Scores responses with a remote judge; the client lives on the instance."""

    name = "api_reward"

    def __init__(self):
        self.client = httpx.AsyncClient(base_url=os.environ.get("JUDGE_URL", "http://judge"))

    async def call(self, final_response: str, answer: str) -> float:
        response = await self.client.post("/score", json={"response": final_response, "gold": answer})
        response.raise_for_status()
        return float(response.json()["score"])
'''

WEBSHOP = """\
from agentfly.envs import WebShopEnv
from rewardkit import Context, ResourceSpec, reward

WEBSHOP = ResourceSpec(name="webshop", factory=WebShopEnv, max_instances=8)


@reward(name="webshop_reward")
async def webshop_reward(final_response: str, context: Context, **data) -> dict:
    env = await context.acquire_resource(spec=WEBSHOP, id=context.rollout_id, scope="global")
    observation = await env.step(final_response)
    if observation.get("done"):
        return {"reward": float(observation["reward"]), "steps": observation["steps"]}
    return {"reward": 0.0, "steps": observation.get("steps", 0)}
"""

SUMMARY_WITH_PENALTY = """\
from rewardkit import reward
from rewardkit.qa import f1_score


@reward(name="summary_reward_with_penalty")
def summary_reward_with_penalty(final_response, answer, length_penalty, max_length):
    f1 = f1_score(final_response, answer)
    words = len(final_response.split())
    if words > max_length:
        f1 -= length_penalty * (words - max_length) / max_length
    return max(0.0, f1)
"""

SEEDS = {
    "qa_f1_reward": QA_F1,
    "api_reward": API_REWARD,
    "webshop_reward": WEBSHOP,
    "summary_reward_with_penalty": SUMMARY_WITH_PENALTY,
}
TASK_FIELDS = ("answer", "length_penalty", "max_length")
