"""DeepRM (Mao et al., HotNets 2016) and DeepRM_Plus (Guo et al., IEEE IoT-J 2021), whole.

* `agents.deeprm.config`: the hyper-parameters of both (`DeepRMConfig`; DeepRM_Plus's defaults,
  `DEEPRM_PLUS_DEFAULTS`), torch-free;
* `agents.deeprm.agent`: DeepRM's network, its REINFORCE training and its checkpoints;
* `agents.deeprm.plus`: DeepRM_Plus's CNN (Table I) and the behaviour cloning of SJF (Algorithm 2);
* `agents.deeprm.numpy_forward`: the trained network in numpy, what every DeepRM policy acts with;
* `agents.deeprm.broker`: a trained policy as a broker of the core, on any cluster.

The environment both papers train in (the cluster image, the jobsets, their SJF and Packer) is
`cloudsim.engine.envs.deeprm`: the traces' DeepRM loader and generator build on it too, and they may not import
the agents. The names below import torch on first use only (`agents.kit.exports`).
"""

from agents.kit.exports import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    "config": ("DEEPRM_PLUS_DEFAULTS", "DeepRMConfig"),
    "agent": ("AGENT", "POLICY_FILE", "DeepRMNet", "DeepRMPolicy", "load_policy", "make_net", "read_policy_checkpoint",
              "rollout", "shipped_checkpoint", "train"),
    "plus": ("CLONE_FILE", "CloneResult", "DeepRMPlusNet", "clone", "clone_sjf", "expert_pairs"),
    "numpy_forward": ("NumpyDeepRM",),
    "broker": ("DeepRMBroker", "load_numpy_policy"),
})
