"""RLSK (Huang, Xiao & Wu), whole: `agents.rlsk.config` (the deep Q-network's hyper-parameters, torch-free),
`agents.rlsk.agent` (the Q-network, its DQN training and the trained dispatcher; the paper's sections are mapped
there) and `agents.rlsk.federation` (the cluster-level policies, trained or not, as brokers of the core). The
federation the agent acts in is `cloudsim.engine.envs.rlsk`. The names below import torch on first use only
(`agents.kit.exports`)."""

from agents.kit.exports import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    "config": ("RLSKConfig",),
    "agent": ("RLSKPolicy", "load_policy", "make_env", "shipped_checkpoint", "train"),
    "federation": ("FederatedBroker", "make_dispatcher"),
})
