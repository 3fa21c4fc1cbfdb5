"""A word-level tokenizer and a tiny Llama built in the test (no hub download), for the frameworks' real code."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SPECIAL_TOKENS = ("<pad>", "<unk>", "<s>", "</s>")


def word_tokenizer(words: Iterable[str]) -> Any:
    """A ``transformers`` fast tokenizer over ``words`` (split on whitespace, decoded with spaces)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocabulary = [*SPECIAL_TOKENS, *sorted(set(words) - set(SPECIAL_TOKENS))]
    backend = Tokenizer(models.WordLevel(vocab={word: index for index, word in enumerate(vocabulary)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    tokenizer.padding_side = "left"
    return tokenizer


def tiny_llama(tokenizer: Any) -> Any:
    """A one-layer ``LlamaForCausalLM`` over ``tokenizer``'s vocabulary (seeded: the same every run)."""
    import transformers

    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    transformers.set_seed(0)
    return transformers.LlamaForCausalLM(config)


def two_step_grpo_config(output_dir: str) -> Any:
    """TRL's ``GRPOConfig`` for 2 steps on CPU: batches of 4 completions, 2 per prompt, 4 tokens."""
    import trl

    return trl.GRPOConfig(
        output_dir=output_dir,
        use_cpu=True,
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=4,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=0,
        dataloader_num_workers=0,
    )
