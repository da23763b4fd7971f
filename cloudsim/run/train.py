"""`train`: the one entry of every `cloudsim train AGENT`; the config says which agent, and where and how.

Each agent has one command config, whose options are the run's (``--out DIR``, ``--resume``,
``--device``, ...) and the agent's own settings (declared in its config dataclass,
`agents.kit.settings.setting`): `TrainConfig` (DeepJS, on chunks of a workload), `Deepk8sTrainConfig`,
`DeepRMTrainConfig`, `DeepRMPlusTrainConfig` and `RLSKTrainConfig`. Each checks itself when made, so a
training that cannot work is refused before anything is written; `train` then runs it into
``config.out`` and returns its summary. Every training writes ``DIR/policy.pt`` (what
``--checkpoint AGENT=DIR/policy.pt`` runs), the state it resumes from and its log; stopped before its
first checkpoint, it leaves nothing (`cloudsim.run.output.resumable_or_nothing`), and stopped while it saves,
no partial file (`agents.kit.written_whole`); what a save killed outright left is removed when the next
training in the folder starts (`agents.kit.remove_partial_files`).
"""

from __future__ import annotations

from typing import Any, Callable

from agents.kit import remove_partial_files
from cloudsim.run.output import resumable_or_nothing
from cloudsim.run.train_deepjs import DeepJSTraining, TrainConfig, TrainWorkloadConfig, train_deepjs
from cloudsim.run.train_deepk8s import Deepk8sTrainConfig, train_deepk8s
from cloudsim.run.train_deeprm import DeepRMPlusTrainConfig, DeepRMTrainConfig, train_deeprm
from cloudsim.run.train_rlsk import RLSKTrainConfig, train_rlsk

__all__ = ["DeepJSTraining", "Deepk8sTrainConfig", "DeepRMPlusTrainConfig", "DeepRMTrainConfig", "RLSKTrainConfig",
           "TrainConfig", "TrainWorkloadConfig", "train", "train_deepjs"]

TRAINERS: dict[type, Callable[..., dict]] = {
    TrainConfig: train_deepjs, Deepk8sTrainConfig: train_deepk8s, DeepRMTrainConfig: train_deeprm,
    DeepRMPlusTrainConfig: train_deeprm, RLSKTrainConfig: train_rlsk}
"""Each command config's training."""


def train(config: Any, on_chunk: Callable[[dict], None] | None = None) -> dict:
    """Train the agent ``config`` describes into ``config.out`` (continuing the training saved there with
    ``config.resume``) and return the run's summary, with the torch CPU threads it ran on (``threads``).
    ``on_chunk`` (DeepJS only) is called with each chunk's entry as it is trained."""
    trainer = TRAINERS.get(type(config))
    if trainer is None:
        raise TypeError(f"train() takes one of {', '.join(c.__name__ for c in TRAINERS)}, got {type(config).__name__}")
    if on_chunk is not None and trainer is not train_deepjs:
        raise TypeError("on_chunk applies to DeepJS's training (a TrainConfig)")
    remove_partial_files(config.out)  # never resumed beside the half-file of a save that was killed
    with resumable_or_nothing(config.out, config.state_file):  # stopped early: resumable, or nothing left
        summary = trainer(config, on_chunk) if on_chunk is not None else trainer(config)
    import torch  # already imported by the training

    return {**summary, "threads": torch.get_num_threads()}
