"""A recurrent (LSTM or GRU) causal language model as a transformers model class.

train.py saves it with this file beside the weights (``auto_map`` in config.json), so the folder
loads with ``AutoModelForCausalLM.from_pretrained(DIR, trust_remote_code=True)`` and is evaluated
like the reference transformers: ``harness eval --model hf:DIR --model-args
trust_remote_code=true``. The file imports only torch and transformers (it is copied on its own).

Padding: positions whose ``attention_mask`` is 0 are skipped, not fed to the cell. Each row's
real tokens are moved to the front (in order), run as a packed sequence, and put back, so a
left-padded row (what the harness batches for generation) gives the same outputs at its real
positions as the row alone. Padded positions get zero hidden states.

Generation keeps no cache: each step runs the whole sequence again (the models are tiny and the
answers short), so ``prepare_inputs_for_generation`` always passes every token.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from transformers import GenerationMixin, PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import CausalLMOutput

CELLS = {"lstm": nn.LSTM, "gru": nn.GRU}


class RecurrentConfig(PretrainedConfig):
    """Vocabulary, width, depth and cell type of a ``RecurrentForCausalLM``."""

    model_type = "genharness_recurrent"

    def __init__(self, vocab_size: int = 128, hidden_size: int = 128, num_layers: int = 1,
                 cell: str = "lstm", **kwargs: Any) -> None:
        if cell not in CELLS:
            raise ValueError(f"cell: expected one of {', '.join(CELLS)}, got {cell!r}")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.cell = cell
        kwargs.setdefault("use_cache", False)
        super().__init__(**kwargs)


class RecurrentForCausalLM(PreTrainedModel, GenerationMixin):
    """Token embedding → stacked LSTM/GRU → linear head over the vocabulary."""

    config_class = RecurrentConfig
    base_model_prefix = "recurrent"
    main_input_name = "input_ids"

    def __init__(self, config: RecurrentConfig) -> None:
        super().__init__(config)
        d = config.hidden_size
        self.embed = nn.Embedding(config.vocab_size, d)
        self.rnn = CELLS[config.cell](d, d, config.num_layers, batch_first=True)
        self.head = nn.Linear(d, config.vocab_size)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        """Keep torch's own initialisation (uniform ±1/sqrt(width) for the cell and the head)."""

    def get_input_embeddings(self) -> nn.Module:
        return self.embed

    def set_input_embeddings(self, value: nn.Module) -> None:
        self.embed = value

    def _hidden(self, input_ids: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        x = self.embed(input_ids)
        if mask is None or bool(mask.all()):
            return self.rnn(x)[0]
        keep = mask.to(torch.long)
        # real tokens first, in their order; packed so the cell never sees a padded position
        order = torch.argsort(1 - keep, dim=1, stable=True)
        idx = order.unsqueeze(-1).expand_as(x)
        lengths = keep.sum(-1).clamp(min=1).cpu()
        packed = pack_padded_sequence(torch.gather(x, 1, idx), lengths, batch_first=True,
                                      enforce_sorted=False)
        out, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True,
                                     total_length=x.shape[1])
        return torch.zeros_like(out).scatter(1, idx, out) * keep.unsqueeze(-1).to(out.dtype)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                labels: torch.Tensor | None = None, **kwargs: Any) -> CausalLMOutput:
        logits = self.head(self._hidden(input_ids, attention_mask))
        loss = None
        if labels is not None:  # next-token loss, -100 ignored (as the transformers classes)
            loss = nn.functional.cross_entropy(
                logits[:, :-1].reshape(-1, logits.shape[-1]).float(),
                labels[:, 1:].reshape(-1), ignore_index=-100)
        return CausalLMOutput(loss=loss, logits=logits)

    @classmethod
    def _supports_default_dynamic_cache(cls) -> bool:
        return False  # no key/value cache: generate() must not make one

    def prepare_inputs_for_generation(self, input_ids: torch.Tensor,
                                      attention_mask: torch.Tensor | None = None,
                                      **kwargs: Any) -> dict[str, Any]:
        return {"input_ids": input_ids, "attention_mask": attention_mask}
