"""A word-level tokenizer built in the test (no hub download), for the frameworks' real code."""

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
