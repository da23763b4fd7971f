"""`train`: the one entry of every `cloudsim train AGENT`; the config says which agent, and where and how.

Each training is declared once, by its `agents.registry.TrainingSpec`; its command config is made from the spec
(`cloudsim.run.config.training.training_command`): the run's options (``--out DIR``, ``--resume``, ``--device``,
``--threads``, ...), the spec's own, and the agent's settings (declared in its config dataclass,
`agents.kit.settings.setting`). An agent that trains on chunks of a workload (DeepJS) has `TrainConfig`, which
adds the workload, cluster and runner. Each config checks itself when made, so a training that cannot work is
refused before anything is written; `train` then runs the spec's training into ``config.out`` and returns its
summary. Every training writes ``DIR/policy.pt`` (what ``--checkpoint AGENT=DIR/policy.pt`` runs), the state it
resumes from and its log; stopped before its first checkpoint, it leaves nothing
(`cloudsim.run.output.resumable_or_nothing`), and stopped while it saves, no partial file
(`agents.kit.written_whole`); what a save killed outright left is removed when the next training in the folder
starts (`agents.kit.remove_partial_files`).
"""

from __future__ import annotations

from typing import Any, Callable

from agents.kit import remove_partial_files
from agents.registry import training_names, training_spec
from cloudsim.run.config.training import AgentTraining, training_command
from cloudsim.run.output import resumable_or_nothing
from cloudsim.run.train_deepjs import DeepJSTraining, TrainConfig, TrainWorkloadConfig, train_deepjs

__all__ = ["DeepJSTraining", "Deepk8sTrainConfig", "DeepRMPlusTrainConfig", "DeepRMTrainConfig", "RLSKTrainConfig",
           "TrainConfig", "TrainWorkloadConfig", "train", "train_deepjs", "training_command"]

# The command configs under the names of cloudsim 0.1.0, made from their specs.
Deepk8sTrainConfig = training_command("deepk8s")
DeepRMTrainConfig = training_command("deeprm")
DeepRMPlusTrainConfig = training_command("deeprm-plus")
RLSKTrainConfig = training_command("rlsk")


def train(config: Any, on_chunk: Callable[[dict], None] | None = None) -> dict:
    """Train the agent ``config`` describes (a `training_command` config, or DeepJS's `TrainConfig`) into
    ``config.out`` (continuing the training saved there with ``config.resume``) and return the run's summary, with
    the torch CPU threads it ran on (``threads``). ``on_chunk`` (a training on chunks only) is called with each
    chunk's entry as it is trained."""
    if not isinstance(config, (AgentTraining, TrainConfig)):
        takes = [TrainConfig] + [training_command(name) for name in training_names()
                                 if training_spec(name).trains_on == "environment"]
        raise TypeError(f"train() takes one of {', '.join(c.__name__ for c in takes)}, got {type(config).__name__}")
    if on_chunk is not None and not isinstance(config, TrainConfig):
        raise TypeError("on_chunk applies to a training on chunks of a workload (DeepJS's TrainConfig)")
    remove_partial_files(config.out)  # never resumed beside the half-file of a save that was killed
    with resumable_or_nothing(config.out, config.state_file):  # stopped early: resumable, or nothing left
        summary = train_deepjs(config, on_chunk) if isinstance(config, TrainConfig) else config.train()
    import torch  # already imported by the training

    return {**summary, "threads": torch.get_num_threads()}
