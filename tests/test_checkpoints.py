"""DeepJS checkpoints checked against their use: unreadable files, the cluster they were trained on, resumes."""

import errno
import pickle

import numpy as np
import pytest
import torch

from agents import make_broker
from agents.deepjs import (
    SHIPPED_CHECKPOINT,
    CheckpointError,
    CheckpointMismatchError,
    DeepJS,
    DeepJSConfig,
    DeepJSTrainer,
    NumpyFitness,
    load_policy,
    read_checkpoint,
)
from cloudsim import ClusterSpec, JobSpec
from conftest import task

CLUSTER = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})
JOBS = [JobSpec(0, 0.0, (task(0, 2, 1, 0.1, 2), task(1, 1, 2, 0.2, 3))), JobSpec(1, 1.0, (task(0, 3, 1, 0.1, 1),))]
FIX = "train one with `cloudsim train deepjs --out DIR` (it writes DIR/policy.pt), or pass another checkpoint with " \
      "--checkpoint"
ADVICE = ". Train a checkpoint on this cluster (`cloudsim train deepjs` with the same --machines and --capacity) " \
         "before relying on its makespans."


def saved_checkpoint(path, config=DeepJSConfig(iterations=2, trajectories=3, seed=7), cluster=CLUSTER):
    """An untrained checkpoint (normaliser fitted on JOBS): what `save` writes, without the training time."""
    trainer = DeepJSTrainer(config, cluster, workers=1)
    trainer.fit_normaliser(JOBS)
    return trainer.save(path)


# ------------------------------------------------------------------ unreadable files
def _garbage(path):
    path.write_bytes(b"these bytes are no checkpoint\n" * 8)


def _truncated(path):
    whole = saved_checkpoint(path).read_bytes()
    path.write_bytes(whole[: len(whole) // 2])


def _empty(path):
    path.write_bytes(b"")


def _a_tensor(path):
    torch.save(torch.zeros(3), path)


def _missing_keys(path):
    torch.save({"model": {}, "config": {}}, path)


def _a_directory(path):
    path.mkdir()


def _invalid_config(path):
    saved_checkpoint(path)
    saved = torch.load(path, weights_only=True)
    saved["config"]["hidden"] = [3, 0, 6]
    torch.save(saved, path)


def _weights_of_another_network(path):
    saved_checkpoint(path)
    saved = torch.load(path, weights_only=True)
    saved["config"]["hidden"] = [4]  # the weights are still those of (3, 9, 6)
    torch.save(saved, path)


def _model_not_weights(path):
    saved_checkpoint(path)
    saved = torch.load(path, weights_only=True)
    saved["model"] = [1.0, 2.0]
    torch.save(saved, path)


@pytest.mark.parametrize("make, reason", [
    # torch's exception type (shown in brackets) depends on the bytes and on the torch version.
    (_garbage, "): it is damaged, truncated or not a torch checkpoint"),
    (_truncated, "): it is damaged, truncated or not a torch checkpoint"),
    (_empty, "the file is empty"),
    (_a_tensor, "it holds a Tensor, not the dict that `DeepJSTrainer.save` writes"),
    (_missing_keys, "it lacks optimizer, cluster, chunks_done, log, torch_rng (a torch file, but not one written by "
                    "`DeepJSTrainer.save`)"),
    (_a_directory, "it is a directory"),
    (_invalid_config, "its config is invalid (DeepJSConfig.hidden=(3, 0, 6): layer 1 has size 0"),
    (_weights_of_another_network, "are not the network its config describes (6 features, hidden (4,)"),
    (_model_not_weights, "its model is a list, not the network's weights by name"),
])
def test_a_file_that_is_no_checkpoint_is_named_with_the_reason_and_the_fix(tmp_path, make, reason):
    path = tmp_path / "deepjs.pt"
    make(path)
    for read in (read_checkpoint, load_policy, lambda p: make_broker("deepjs", checkpoint=str(p)),
                 lambda p: DeepJSTrainer.resume(p, workers=1)):
        with pytest.raises(CheckpointError) as caught:
            read(path)
        message = str(caught.value)
        assert message.startswith(f"{path} is not a usable DeepJS checkpoint: ")
        assert reason in message and message.endswith(FIX)
        assert ("torch cannot load it (" in message) == reason.startswith(")")
        assert caught.value.path == path and isinstance(caught.value, ValueError)


@pytest.mark.parametrize("damage, error", [
    (lambda saved: saved["optimizer"].update(param_groups=[]), "ValueError"),  # Adam's state for no parameters
    (lambda saved: saved.update(torch_rng=torch.zeros(3)), "TypeError"),  # floats, not a generator state
])
def test_resume_names_a_checkpoint_whose_training_state_is_damaged(tmp_path, damage, error):
    path = saved_checkpoint(tmp_path / "deepjs.pt")
    saved = torch.load(path, weights_only=True)
    damage(saved)
    torch.save(saved, path)
    load_policy(path)  # the weights alone are fine: the checkpoint still schedules
    with pytest.raises(CheckpointError) as caught:
        DeepJSTrainer.resume(path, workers=1)
    message = str(caught.value)
    assert message.startswith(f"{path}: cannot resume from it: its optimizer state, progress or random state is "
                              f"damaged ({error}: ")
    assert message.endswith("; start a new training (another --out folder, without --resume)")


def test_a_missing_file_stays_file_not_found_with_its_path(tmp_path):
    path = tmp_path / "nowhere" / "deepjs.pt"
    with pytest.raises(FileNotFoundError) as caught:
        read_checkpoint(path)
    assert str(caught.value) == f"{path}: no DeepJS checkpoint there; {FIX}"


def test_save_leaves_no_partial_file_and_the_old_checkpoint_whole(tmp_path, monkeypatch):
    path = saved_checkpoint(tmp_path / "deepjs.pt")
    trainer = DeepJSTrainer.resume(path, workers=1)
    trainer.log.append({"chunk": 0, "note": lambda: "unpicklable"})
    with pytest.raises((pickle.PicklingError, AttributeError), match="pickle"):
        trainer.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deepjs.pt"]
    trainer.log.pop()

    def disk_full(obj, f):  # a write that fails midway: some bytes are already in the .partial file
        f.write(b"PK\x03\x04 half a checkpoint")
        f.flush()
        assert (tmp_path / "deepjs.pt.partial").stat().st_size > 0
        raise OSError(errno.ENOSPC, "No space left on device")

    trainer.chunks_done.append(5)
    monkeypatch.setattr(torch, "save", disk_full)
    with pytest.raises(OSError, match="No space left"):
        trainer.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deepjs.pt"]
    assert read_checkpoint(path)["chunks_done"] == []  # the previous save, not the failed one


# ------------------------------------------------------------------ the cluster a checkpoint was trained on
def test_the_checkpoint_records_its_cluster_and_the_broker_knows_it(tmp_path):
    path = saved_checkpoint(tmp_path / "deepjs.pt")
    assert read_checkpoint(path)["cluster"] == CLUSTER
    broker = make_broker("deepjs", checkpoint=str(path))
    assert broker.checkpoint == path and broker.trained_on == CLUSTER
    # Still the pair it always was, for code that unpacks it.
    fitness, config = load_policy(path)
    assert isinstance(fitness, NumpyFitness) and config.seed == 7
    # A broker sent to a worker process keeps what check_cluster needs.
    copy = pickle.loads(pickle.dumps(broker))
    assert copy.checkpoint == path and copy.trained_on == CLUSTER and copy.check_cluster(CLUSTER) == []


def test_the_same_cluster_passes_silently(tmp_path):
    path = saved_checkpoint(tmp_path / "deepjs.pt")
    broker = make_broker("deepjs", checkpoint=str(path))
    assert broker.check_cluster(ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})) == []


@pytest.mark.parametrize("cluster, said", [
    (ClusterSpec.uniform(3, {"cpu": 8, "memory": 1}),
     "this cluster has 3 machines of cpu=8, memory=1: it learned on a mean machine capacity of cpu=4, memory=1 "
     "(this cluster: cpu=8, memory=1), so its machine features fall elsewhere here and may not fit"),
    # Mean cpu (4 + 2 + 4) / 3 = 3.33333.
    (ClusterSpec(("cpu", "memory"), ((4, 1), (2, 1), (4, 1))),
     "this cluster has 3 machines: 2 of cpu=4, memory=1 and 1 of cpu=2, memory=1: it learned on a mean machine "
     "capacity of cpu=4, memory=1 (this cluster: cpu=3.33333, memory=1), so its machine features fall elsewhere "
     "here and may not fit"),
    # Same machines, more of them: the normaliser still fits, what was learned may not.
    (ClusterSpec.uniform(20, {"cpu": 4, "memory": 1}),
     "this cluster has 20 machines of cpu=4, memory=1: its fitness was learned on those machines and may rank pairs "
     "differently on these"),
])
def test_other_machines_give_a_warning_saying_what_differs(tmp_path, cluster, said):
    path = saved_checkpoint(tmp_path / "deepjs.pt")
    warnings = make_broker("deepjs", checkpoint=str(path)).check_cluster(cluster)
    assert warnings == [f"checkpoint {path} was trained on 2 machines of cpu=4, memory=1; {said}{ADVICE}"]


def test_the_shipped_checkpoint_warns_on_another_cluster_by_its_name():
    broker = make_broker("deepjs")
    assert broker.checkpoint == SHIPPED_CHECKPOINT
    assert broker.check_cluster(ClusterSpec.uniform(5, {"cpu": 64, "memory": 1, "disk": 1})) == []
    assert broker.check_cluster(ClusterSpec.uniform(20, {"cpu": 32, "memory": 1, "disk": 1})) == [
        "the shipped checkpoint deepjs_5x64.pt was trained on 5 machines of cpu=64, memory=1, disk=1; this cluster "
        "has 20 machines of cpu=32, memory=1, disk=1: it learned on a mean machine capacity of cpu=64, "
        f"memory=1 (this cluster: cpu=32, memory=1), so its machine features fall elsewhere here and may not "
        f"fit{ADVICE}"]


def test_a_cluster_without_a_resource_the_features_read_is_refused():
    with pytest.raises(CheckpointMismatchError) as caught:
        make_broker("deepjs").check_cluster(ClusterSpec.uniform(5, {"cpu": 64.0, "disk": 1.0}))
    assert str(caught.value) == (
        "the shipped checkpoint deepjs_5x64.pt: its features (machine_cpu, machine_memory, task_cpu, task_memory, "
        "task_duration, task_waiting) need resources (cpu, memory) but this cluster has (cpu, disk), without memory. "
        "Add memory to the cluster (--capacity), or use a policy whose features this cluster has.")
    assert isinstance(caught.value, CheckpointError) and caught.value.path == SHIPPED_CHECKPOINT


@pytest.mark.parametrize("resources", [("cpu", "memory"), ("memory", "cpu", "disk")])
def test_other_resources_that_the_features_do_not_read_are_a_warning(resources):
    # The features read cpu and memory by name: a cluster without disk (as the v2017 comparison uses),
    # or with its resources in another order, is scheduled right, and the user is told it differs.
    cluster = ClusterSpec.uniform(5, {r: {"cpu": 64.0, "memory": 1.0, "disk": 1.0}[r] for r in resources})
    warnings = make_broker("deepjs").check_cluster(cluster)
    assert warnings[0] == (
        f"the shipped checkpoint deepjs_5x64.pt was trained on resources (cpu, memory, disk) but this cluster has "
        f"({', '.join(resources)}); its features read only cpu, memory, which this cluster has, so it runs.")


def test_a_policy_not_from_a_file_is_checked_against_what_its_features_read():
    trainer = DeepJSTrainer(DeepJSConfig(), CLUSTER, workers=1)
    trainer.fit_normaliser(JOBS)
    broker = DeepJS(trainer.policy())  # knows the training cluster, not a file
    assert broker.check_cluster(ClusterSpec.uniform(4, {"cpu": 4, "memory": 1}))[0].startswith(
        "this DeepJS policy was trained on 2 machines of cpu=4, memory=1; this cluster has 4 machines")
    bare = DeepJS(tuple(trainer.policy()))  # a plain (network, config) pair: no cluster to compare machines with
    assert bare.check_cluster(ClusterSpec.uniform(9, {"cpu": 1, "memory": 9})) == []
    with pytest.raises(CheckpointMismatchError) as caught:
        bare.check_cluster(ClusterSpec.uniform(2, {"cpu": 4, "disk": 1}))
    assert str(caught.value) == (
        "this DeepJS policy: its features (machine_cpu, machine_memory, task_cpu, task_memory, task_duration, "
        "task_waiting) need resources (cpu, memory) but this cluster has (cpu, disk), without memory. Add memory to "
        "the cluster (--capacity), or use a policy whose features this cluster has.")


def test_training_refuses_a_cluster_without_what_the_features_read():
    with pytest.raises(ValueError, match=r"read resources memory, which the cluster \(cpu, disk\) lacks; add them"):
        DeepJSTrainer(DeepJSConfig(), ClusterSpec.uniform(2, {"cpu": 4, "disk": 1}), workers=1)
    # Features that only read cpu are fine there.
    DeepJSTrainer(DeepJSConfig(features=("machine_cpu", "task_cpu")), ClusterSpec.uniform(2, {"cpu": 4, "disk": 1}))


# ------------------------------------------------------------------ resuming with options
def test_resume_lists_every_option_that_contradicts_the_checkpoint(tmp_path):
    path = saved_checkpoint(tmp_path / "deepjs.pt")  # iterations 2, trajectories 3, seed 7, lr 0.001, 2 machines
    asked = DeepJSConfig(iterations=5, trajectories=4, learning_rate=0.01, seed=7)
    with pytest.raises(CheckpointError) as caught:
        DeepJSTrainer.resume(path, workers=1, config=asked, cluster=ClusterSpec.uniform(3, {"cpu": 4, "memory": 1}),
                             given=frozenset({"cluster", "seed", "iterations", "learning_rate"}))
    # Listed in DeepJSConfig's field order, then the cluster, whatever the set's order. seed agrees; trajectories
    # differs but the user did not ask for it, so it is no contradiction.
    assert str(caught.value) == (
        f"{path}: cannot resume with options that contradict the checkpoint ("
        f"learning_rate: the checkpoint has 0.001, asked for 0.01; "
        f"iterations: the checkpoint has 2, asked for 5; "
        f"cluster: the checkpoint has 2 machines of cpu=4, memory=1, asked for 3 machines of cpu=4, memory=1); "
        f"drop those options to continue the training as saved, or start a new training (another --out folder, "
        f"without --resume)")
    assert caught.value.path == path


def test_resume_takes_what_was_not_asked_for_from_the_checkpoint(tmp_path):
    path = saved_checkpoint(tmp_path / "deepjs.pt")
    saved = read_checkpoint(path)
    asked = DeepJSConfig(iterations=50, trajectories=40, hidden=(3, 9, 6), seed=7)
    same = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})
    resumed = DeepJSTrainer.resume(path, workers=1, config=asked, cluster=same, given=("hidden", "seed", "cluster"))
    assert resumed.config == saved["config"] and (resumed.config.iterations, resumed.config.trajectories) == (2, 3)
    assert resumed.cluster == CLUSTER
    for a, b in zip(resumed.model.state_dict().values(), saved["model"].values()):
        assert torch.equal(a, b)


def test_resume_rejects_names_that_are_no_option():
    with pytest.raises(ValueError, match=r"unknown names \['iteration'\]; name DeepJSConfig fields \(features, "):
        DeepJSTrainer.resume("unused.pt", config=DeepJSConfig(), given=["iteration"])
    with pytest.raises(ValueError, match="names 'cluster' but cluster is None"):
        DeepJSTrainer.resume("unused.pt", given=["cluster"])


def test_a_checkpoint_round_trip_keeps_the_normaliser(tmp_path):
    path = saved_checkpoint(tmp_path / "deepjs.pt")
    fitness, config = load_policy(path)
    # machine cpu on 4-cpu machines: uniform on [0, 4], mean 2, std 4 / sqrt(12).
    assert config.feature_mean[0] == 2.0 and config.feature_std[0] == pytest.approx(4 / np.sqrt(12))
    assert np.array_equal(fitness.mean, np.asarray(config.feature_mean))
