"""A trained Deepk8s policy as a broker: its checkpoint (`save_policy`, `load_policy`), its numpy
forward (`Deepk8sPolicy`, through `cloudsim.engine.arithmetic`) and `Deepk8sBroker`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.deepk8s.network import ActorCritic
from agents.deepk8s.config import Deepk8sConfig, shipped_checkpoint
from agents.kit import CheckpointMismatchError, read_checkpoint, save_checkpoint
from cloudsim.engine import arithmetic
from cloudsim import ClusterSpec, ClusterView, Decision
from cloudsim.engine.envs import Deepk8sEncoding

AGENT = "deepk8s"
POLICY_FILE = "policy.pt"  # the broker's checkpoint: weights, config, cluster


def _numpy_layers(state: dict[str, torch.Tensor], prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weights as inputs x outputs, bias) of each Linear under ``prefix`` in a state dict, in order."""
    names = sorted({k.rsplit(".", 1)[0] for k in state if k.startswith(prefix + ".")},
                   key=lambda k: int(k.split(".")[1]))
    return [(state[f"{n}.weight"].numpy().T.copy(), state[f"{n}.bias"].numpy().copy()) for n in names]


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a matrix and each row's index among them, rows compared bit by bit.

    A row of at most 8 bytes (two float32 resources) is sorted as one integer: 40 times faster than
    ``np.unique(axis=0)`` on 4,034 machines."""
    rows = np.ascontiguousarray(rows)
    width = rows.shape[1] * rows.itemsize
    if width <= 8:
        padded = np.zeros((len(rows), 8), dtype=np.uint8)
        padded[:, :width] = rows.view(np.uint8)
        keys = padded.view(np.uint64).ravel()
    else:
        keys = rows.view(np.dtype((np.void, width))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], inverse.reshape(-1)


class _NumpyPairs:
    """`PairActorCritic`'s actor in numpy. Machines with the same free resources get the same scores, so each
    distinct free vector among the machines where something fits is scored once: on a large cluster most
    machines are alike (empty, or full)."""

    def __init__(self, state: dict[str, torch.Tensor], resources: int, window: int) -> None:
        weight = {name: state[f"{name}.weight"].numpy().T for name in ("machine_in", "slot_in", "left_in",
                                                                        "context_in")}
        self.resources, self.window = resources, window
        # f W_m + t W_s + (f - d) W_l = f (W_m + W_l) + t W_s - d W_l: a machine's part and a slot's part.
        self.machine = weight["machine_in"] + weight["left_in"]
        self.slot = weight["slot_in"].copy()
        self.slot[:resources] -= weight["left_in"]
        self.context = weight["context_in"], state["context_in.bias"].numpy()
        self.pair = arithmetic.Network(_numpy_layers(state, "pair"))
        self.wait = arithmetic.Network(_numpy_layers(state, "wait"))

    def logits(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """The actor's logits; with ``mask``, only the machines with an allowed pair are scored (-inf else)."""
        free, slots, tail = Deepk8sEncoding.split(obs, self.resources, self.window)
        machines = len(free)
        context = np.concatenate([arithmetic.column_means(free), free.max(0), arithmetic.column_means(slots),
                                  [(slots != 0).any(-1).mean()], tail])
        rows = (np.arange(machines) if mask is None
                else np.flatnonzero(mask[:-1].reshape(machines, self.window).any(axis=1)))
        logits = np.full(machines * self.window + 1, -np.inf, dtype=np.float32)
        if len(rows):
            distinct, inverse = _distinct_rows(free[rows])
            weights, bias = self.context
            first = arithmetic.dense(distinct, self.machine)[:, None, :] + \
                (arithmetic.dense(slots, self.slot) + arithmetic.dense(context, weights, bias))[None]
            scores = self.pair(np.maximum(first, 0))[..., 0]
            logits[:-1].reshape(machines, self.window)[rows] = scores[inverse]
        logits[-1] = self.wait(context)[0]
        return logits


class Deepk8sPolicy:
    """A trained actor in numpy (a decision is a few small matrix products, `cloudsim.engine.arithmetic`'s: the same
    bits on every processor; no torch at decide time)."""

    def __init__(self, state: dict[str, torch.Tensor], config: Deepk8sConfig, cluster: ClusterSpec,
                 path: Path | None = None) -> None:
        self.config = config
        self.cluster = cluster
        self.path = path
        self.encoding = Deepk8sEncoding(cluster, config.window)  # the training cluster's
        self.state = state
        self.resources = len(cluster.resources)
        expected = "machine_in.weight" if config.network == "pairs" else "trunk.0.weight"
        if expected not in state:
            raise CheckpointMismatchError(f"{path or 'this Deepk8s policy'}: its config names the {config.network} "
                                          f"network but its weights are of another; the file is inconsistent, "
                                          f"train it again", path=path)
        if config.network == "pairs":
            self.pairs = _NumpyPairs(state, self.resources, config.window)
        else:
            self.layers = arithmetic.Network(_numpy_layers(state, "trunk") + _numpy_layers(state, "pi"))

    @property
    def any_machines(self) -> bool:
        """Whether the network takes any number of machines (its weights are shared over pairs)."""
        return self.config.network == "pairs"

    @property
    def learned_to_wait(self) -> bool:
        """Whether waiting while a task fits is the policy's own choice. DAgger imitates SJF, which never
        waits then: its wait score is pushed below the expert's pair and nothing else, so off the training
        cluster it is an extrapolation (on v2017's first 8 jobs and 1,313 machines it waited while tasks fit,
        for ten times first-fit's makespan). Only reinforcement learns when waiting pays."""
        return self.config.algo != "dagger"

    def logits(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        if self.any_machines:
            return self.pairs.logits(obs, mask)
        return self.layers(obs)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The most likely action among those the mask allows."""
        return int(np.argmax(np.where(mask, self.logits(obs, mask), -np.inf)))


class Deepk8sBroker:
    """A trained Deepk8s policy as a broker: greedy among the window's pairs that fit, else wait.

    It does not wait while nothing runs (it takes its best pair then), nor, when
    trained by DAgger, while a pair fits (`Deepk8sPolicy.learned_to_wait`), nor
    while a pair fits on a cluster other than its training one (the same machines
    of the same capacities): when a wait pays is learned from the arrivals and
    durations of one workload on one cluster, and carried to another it is a
    guess (the pairs PPO policy, on v2017's first 8 jobs and 1,313 machines,
    waited while tasks fit for ten times first-fit's makespan). After
    a wait it is asked again at the next event or after ``max_wait`` time units
    (``wake_after``), as in the environment it was trained in. A
    pairs network sees the cluster it runs on (free resources as fractions of
    its largest machine); a flat one only its training cluster's shape.
    """

    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)

    def __init__(self, policy: Deepk8sPolicy) -> None:
        self.policy = policy
        self.name = policy.config.broker_name
        self.wake_after = policy.config.max_wait
        self._encoding = policy.encoding
        self._capacity: np.ndarray | None = None
        self._on_training_cluster = True  # of the cluster being run (`_encoding_for`)
        self._last: tuple[tuple[bytes, bytes] | None, int] = (None, 0)  # (observation, mask) -> the action taken

    def check_cluster(self, cluster: ClusterSpec) -> list[str]:
        """Refuse a cluster the network cannot read; say what differs from the training cluster."""
        trained = self.policy.cluster
        where = self.policy.path or "this Deepk8s policy"
        if cluster.devices:  # its observation has no device columns: it cannot see why a machine fits or not
            raise CheckpointMismatchError(
                f"{where} observes cpu and memory only, not devices (GPUs); on a GPU cluster use a GPU policy "
                "(fgd, gpu-best-fit, ...) or a heuristic", path=self.policy.path)
        shown = len(trained.resources)
        extra = tuple(cluster.resources[shown:])
        if tuple(cluster.resources[:shown]) != tuple(trained.resources) or (extra and not self.policy.any_machines):
            first = "first " if self.policy.any_machines else ""
            raise CheckpointMismatchError(
                f"{where} reads the resources {', '.join(trained.resources)}; this cluster has "
                f"{', '.join(cluster.resources)}. Give a cluster whose {first}resources are those, or train a "
                f"policy for these (cloudsim train deepk8s ...)", path=self.policy.path)
        if cluster.machines != trained.machines and not self.policy.any_machines:
            raise CheckpointMismatchError(
                f"{where} is a flat network trained for {trained.machines} machines; this cluster has "
                f"{cluster.machines}. Run it on such a cluster, or use a pairs network (the shipped deepk8s, or "
                f"cloudsim train deepk8s --network pairs), which runs on any number", path=self.policy.path)
        notes = []
        if extra:
            notes.append(f"{self.name}: sees {', '.join(trained.resources)}; {', '.join(extra)} is not shown to it "
                         f"(the engine still checks it)")
        if cluster.machines != trained.machines:
            notes.append(f"{self.name}: trained on {trained.machines} machines, running on {cluster.machines}; "
                         f"every machine is scored by the same weights, the cluster seen through means and maxima")
        if not np.allclose(cluster.capacity_array()[:, :shown], trained.capacity_array()[0]):
            scale = "this cluster's largest machine" if self.policy.any_machines else "the training machines"
            notes.append(f"{self.name}: trained on machines of {trained.capacity_array()[0].tolist()}, running on "
                         f"machines of other capacities; it sees resources as fractions of {scale}")
        if self.policy.learned_to_wait and not self._trained_on(cluster.capacity_array()):
            notes.append(f"{self.name}: not its training cluster, so it does not wait while a task fits (when a "
                         f"wait pays was learned on that cluster only)")
        return notes

    def _trained_on(self, capacity: np.ndarray) -> bool:
        """Whether machines of these capacities are the training cluster's (the shown resources alike)."""
        return bool(np.array_equal(capacity[:, : self.policy.resources], self.policy.cluster.capacity_array()))

    def _encoding_for(self, view: ClusterView) -> Deepk8sEncoding:
        """The encoding of the cluster being run (a pairs network), else of the training cluster."""
        if self._capacity is not view.capacity:
            if self._capacity is None or not np.array_equal(self._capacity, view.capacity):
                self._on_training_cluster = self._trained_on(view.capacity)
                if self.policy.any_machines:
                    self._encoding = Deepk8sEncoding(view.capacity, self.policy.config.window,
                                                     shown=self.policy.resources)
            self._capacity = view.capacity
        return self._encoding

    def decide(self, view: ClusterView) -> Decision | None:
        encoding = self._encoding_for(view)
        mask = encoding.action_mask(view)
        if not mask[:-1].any():
            return None
        if not (self.policy.learned_to_wait and self._on_training_cluster) or not (view.free < view.capacity).any():
            # When nothing runs, a wait could end only at an arrival, and after the last one never (the training
            # environment cuts such an episode short as stalled): an idle cluster takes the best pair.
            mask[-1] = False
        obs = encoding.observe(view)
        # The action is a function of the observation and the mask alone (the greedy choice): after a wait
        # that nothing changed (woken by ``wake_after``), they are the same, and so is the action.
        key = (obs.tobytes(), mask.tobytes())
        if key != self._last[0]:
            self._last = (key, self.policy.act(obs, mask))
        return encoding.decode(self._last[1], view)


def _cluster_entry(cluster: ClusterSpec) -> dict:
    return {"machines": cluster.machines, "resources": list(cluster.resources),
            "capacity": cluster.capacity_array().tolist()}


def _cluster_of(entry: dict) -> ClusterSpec:
    capacity = entry["capacity"]
    if len(set(map(tuple, capacity))) != 1:
        raise ValueError("a Deepk8s policy is trained on identical machines")
    return ClusterSpec.uniform(int(entry["machines"]), dict(zip(entry["resources"], capacity[0])))


def save_policy(path: str | Path, net: ActorCritic, config: Deepk8sConfig, cluster: ClusterSpec,
                extra: dict | None = None) -> Path:
    """The broker's checkpoint: the network's weights with the config and the cluster it was trained for."""
    return save_checkpoint(path, agent=AGENT, config=config, model=net.state_dict(),
                           extra={"cluster": _cluster_entry(cluster), **(extra or {})})


def load_policy(path: str | Path | None = None, algo: str = "ppo") -> Deepk8sPolicy:
    """The policy saved at ``path`` (default: the checkpoint shipped for ``algo``)."""
    path = Path(path) if path is not None else shipped_checkpoint(algo)
    saved = read_checkpoint(path, agent=AGENT, title="Deepk8s", keys=("cluster",), config_type=Deepk8sConfig,
                            older={"network": "flat"},  # written before the pairs network existed
                            fix="train one with `cloudsim train deepk8s --out DIR` and pass DIR/policy.pt")
    return Deepk8sPolicy(saved["model"], saved["config"], _cluster_of(saved["cluster"]), path)
