"""A reward whose field the framework's inputs hold under another name fails on its first sample
with the ``field_map`` of the adapter it was raised from (issue 37.2), in each framework's real
code; a bare reward still gets "wrap it with its adapter". OpenRLHF samples without a label are a
missing field, not a wrong answer (issue 37.3)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from hint_reward_file import answer_reward, reference_reward, verl_names

from rewardkit.adapters import to_agentfly, to_openrlhf, to_trl, to_verl
from rewardkit.runtime.define.errors import MissingFieldError

HERE = Path(__file__).resolve().parent
HINT_FILE = HERE / "hint_reward_file.py"
OTHER_FACTORIES = ("to_trl(", "to_verl(", "to_openrlhf(", "to_agentfly(")


def assert_fits(error: BaseException, factory: str, field_map: dict[str, str]) -> None:
    """The error's advice is ``factory``'s field_map, and nothing sends the user elsewhere."""
    message = str(error)
    assert f"{factory}(..., field_map={field_map!r})" in message
    assert "import to_" not in message  # never "wrap it with the adapter" it already is
    assert all(other not in message for other in OTHER_FACTORIES if other != f"{factory}(")


def test_trl_usual_solution_column() -> None:
    adapter = to_trl("math_reward")
    with pytest.raises(MissingFieldError) as raised:
        adapter(
            prompts=["q", "q"],
            completions=["\\boxed{2}", "\\boxed{1}"],
            solution=["2", "2"],
            level=[1, 1],
        )
    assert_fits(raised.value, "to_trl", {"solution": "answer"})
    fixed = to_trl("math_reward", field_map={"solution": "answer"}, group_size=None)
    assert fixed(
        prompts=["q", "q"], completions=["\\boxed{2}", "\\boxed{1}"], solution=["2", "2"]
    ) == [1.0, 0.0]


def test_verl_own_argument_names() -> None:
    with pytest.raises(MissingFieldError) as raised:
        to_verl(verl_names)(
            data_source="d", solution_str="it is 4", ground_truth="4", extra_info={"split": "train"}
        )
    assert_fits(
        raised.value, "to_verl", {"solution_str": "solution_str", "ground_truth": "ground_truth"}
    )
    with pytest.raises(MissingFieldError) as raised:
        to_verl(reference_reward)(
            data_source="d", solution_str="4", ground_truth="4", extra_info={"index": 3}
        )
    assert_fits(raised.value, "to_verl", {"ground_truth": "reference"})


def test_openrlhf_label() -> None:
    with pytest.raises(MissingFieldError) as raised:
        to_openrlhf(reference_reward, return_tensors=False)(["Q: 4"], ["Q: "], ["4"])
    assert_fits(raised.value, "to_openrlhf", {"label": "reference"})


def test_agentfly_passes_fields_by_name_and_adds_no_field_map() -> None:
    with pytest.raises(MissingFieldError) as raised:
        asyncio.run(
            to_agentfly(reference_reward)(final_response="4", trajectory=[], id="r", answer="4")
        )
    assert "field_map" not in str(raised.value)
    assert "import to_" not in str(raised.value)


def test_grpo_trainer_with_a_solution_column(tmp_path: Path) -> None:
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    require_module("transformers", "TRL's trainer trains a transformers model")
    from tiny_models import tiny_llama, two_step_grpo_config, word_tokenizer

    tokenizer = word_tokenizer(["what", "is", "6", "times", "7", "42"])
    dataset = datasets.Dataset.from_list([{"prompt": "what is 6 times 7", "solution": "42"}] * 2)
    trainer = trl.GRPOTrainer(
        model=tiny_llama(tokenizer),
        reward_funcs=[to_trl("math_reward")],
        args=two_step_grpo_config(str(tmp_path)),
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    with pytest.raises(MissingFieldError) as raised:
        trainer.train()
    assert_fits(raised.value, "to_trl", {"solution": "answer"})


def test_verl_naive_manager_loading_the_file(verl: Any) -> None:
    from test_verl_managers import ROWS, make_batch, verl_config
    from tiny_models import word_tokenizer
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    tokenizer = word_tokenizer(word for row in ROWS for text in row for word in text.split())
    compute_score = get_custom_reward_fn(verl_config("naive", path=HINT_FILE))
    manager = get_reward_manager_cls("naive")(
        tokenizer=tokenizer, num_examine=0, compute_score=compute_score
    )
    with pytest.raises(MissingFieldError) as raised:
        manager(make_batch(verl, tokenizer), return_dict=True)
    assert_fits(
        raised.value, "to_verl", {"solution_str": "solution_str", "ground_truth": "ground_truth"}
    )


def test_openrlhf_reward_file_path() -> None:
    require_module("openrlhf", "installed with --no-deps by .ci/test-all")
    agent = require_module("openrlhf.utils.agent", "OpenRLHF's reward-file path")
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=str(HINT_FILE))
    with pytest.raises(MissingFieldError) as raised:
        asyncio.run(executor._fetch_rewards_via_func(["Q: 42"], ["Q: "], ["42"]))
    assert_fits(raised.value, "to_openrlhf", {"label": "reference"})


def test_openrlhf_without_labels_is_a_missing_field_not_a_zero() -> None:
    require_module("openrlhf", "installed with --no-deps by .ci/test-all")
    agent = require_module("openrlhf.utils.agent", "OpenRLHF's reward-file path")
    adapter = to_openrlhf(answer_reward, return_tensors=False)
    # a labelled sample scores; OpenRLHF without --data.label_key sends None labels
    assert adapter(["Q: 4"], ["Q: "], ["4"])["rewards"] == [1.0]
    with pytest.raises(MissingFieldError, match=r"requires field 'answer'.*--data.label_key"):
        adapter(["Q: 4"], ["Q: "], [None])
    assert adapter.stats.failures == 0

    executor = agent.SingleTurnAgentExecutor(remote_rm_url=str(HINT_FILE))
    executor.reward_func = adapter  # OpenRLHF's own call of the file's reward_func
    with pytest.raises(MissingFieldError, match=r"--data\.label_key"):
        asyncio.run(executor._fetch_rewards_via_func(["Q: 4"], ["Q: "], [None]))


def test_a_bare_reward_still_gets_the_adapter_to_wrap_it_with() -> None:
    with pytest.raises(MissingFieldError, match=r"TRL's reward function.*import to_trl"):
        answer_reward(prompts=["q"], completions=["4"], completion_ids=[[1]], answer=["4"])


def test_openrlhf_http_path_without_labels_answers_like_the_json_api() -> None:
    """``rewardkit serve``'s /get_reward: null labels are the missing field the JSON API reports."""
    httpx = require_module("httpx", "the serve extra installs httpx")
    from rewardkit.serve import RewardSpec, ServeConfig, create_app

    app = create_app(ServeConfig(rewards=(RewardSpec.parse("hint_reward_file:answer_reward"),)))

    async def post(path: str, body: dict[str, Any]) -> Any:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://served") as client:
            return await client.post(path, json=body)

    queries = {"query": ["Q: 4", "Q: 5"], "prompts": ["Q: ", "Q: "]}
    labelled = asyncio.run(post("/get_reward", {**queries, "labels": ["4", "4"]}))
    assert labelled.json()["rewards"] == [1.0, 0.0]
    unlabelled = asyncio.run(post("/get_reward", {**queries, "labels": [None, None]}))
    json_api = asyncio.run(
        post("/v1/score", {"samples": [{"final_response": "4"}, {"final_response": "5"}]})
    )
    assert unlabelled.status_code == json_api.status_code >= 400
    assert "'answer'" in unlabelled.text
    assert "'answer'" in json_api.text
    one_missing = asyncio.run(post("/get_reward", {**queries, "labels": [None, "5"]}))
    assert one_missing.json()["rewards"] == [
        0.0,
        1.0,
    ]  # the unlabelled sample fails alone, never a 0.0 "wrong"
    assert one_missing.json()["extra_logs"]["error"] == [1.0, 0.0]
