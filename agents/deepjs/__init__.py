"""DeepJS (Li & Hu, ICBDC 2019), whole: `agents.deepjs.config` (its configuration, features and rewards,
torch-free) and `agents.deepjs.agent` (the fitness network, the broker and its REINFORCE training on sliding
chunks; the paper's sections are mapped there). The names below import torch on first use only
(`agents.kit.exports`)."""

from agents.kit.exports import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    "config": ("CompletionReward", "DeepJSConfig", "MakespanReward", "SlowdownReward"),
    "agent": ("CheckpointError", "CheckpointMismatchError", "DeepJS", "DeepJSTrainer", "FitnessNet", "NumpyFitness",
              "Policy", "SHIPPED_CHECKPOINT", "Trajectory", "baselines", "evaluate", "load_policy", "read_checkpoint",
              "returns_to_go", "segment_log_softmax"),
})
