"""``cloudsim train AGENT``: train a learned broker (deepjs, deepk8s, deeprm, deeprm-plus, rlsk), one subcommand per
agent."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from tqdm.auto import tqdm

from cloudsim.cli.options import add_section, build, given, parse_given
from cloudsim.run import strict_json
from cloudsim.run.config import ConfigError
from cloudsim.run.config.training import agent_setting_names
from cloudsim.run.train import (DeepJSTraining, Deepk8sTrainConfig, DeepRMPlusTrainConfig, DeepRMTrainConfig,
                                RLSKTrainConfig, TrainConfig, train)

__all__ = ["add_parser", "run"]

SECTIONS = (("workload", "workload"), ("cluster", "cluster"), ("runner", "where the rollouts run"),
            ("agent", "DeepJS"))


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "train", allow_abbrev=False, help="train a learned broker",
        description="Train a learned broker: deepjs (REINFORCE on sliding chunks, DeepJS's Algorithm 2) or "
                    "deepk8s (PPO, A2C or DAgger on Alibaba task sequences), deeprm (REINFORCE in DeepRM's "
                    "environment), deeprm-plus (SJF cloned into a CNN, then REINFORCE) or rlsk (DQN dispatching jobs "
                    "to federated clusters). `cloudsim train AGENT --help` lists each agent's options.")
    agents = parser.add_subparsers(dest="agent", metavar="AGENT", required=True)
    deepjs = agents.add_parser(
        "deepjs", parents=parents, allow_abbrev=False, help="DeepJS (REINFORCE, Algorithm 2)",
        description="Train DeepJS by REINFORCE on sliding chunks (Algorithm 2), saving DIR/policy.pt after each "
                    "chunk (use it with --checkpoint deepjs=DIR/policy.pt) and a log of every iteration; --resume "
                    "continues a saved training exactly.")
    defaults = _deepjs_sections()
    for key, title in SECTIONS[:-1]:
        add_section(deepjs, key, type(defaults[key]), title, defaults[key])
    add_training_sections(deepjs, "agent", DeepJSTraining, "DeepJS")
    deepjs.add_argument("--checkpoint", "--log", dest="retired", help=argparse.SUPPRESS)  # before 0.2: see run
    deepjs.set_defaults(run=run)
    deepk8s = agents.add_parser(
        "deepk8s", parents=parents, allow_abbrev=False, help="Deepk8s (PPO, A2C or DAgger)",
        description="Train a Deepk8s agent on Alibaba task sequences (5 machines of 10 cpu and 64 memory, a "
                    "window of 10 tasks): PPO, A2C or DAgger imitation of SJF. Writes DIR/policy.pt (use it with "
                    "--checkpoint deepk8s=DIR/policy.pt), the state to resume from and a log of every iteration.")
    add_training_sections(deepk8s, "deepk8s", Deepk8sTrainConfig, "Deepk8s")
    deepk8s.set_defaults(run=training_command(
        Deepk8sTrainConfig, "deepk8s",
        lambda agent: f"Deepk8s by {agent.algo} for {agent.iterations} iterations"))
    deeprm_commands = (
        ("deeprm", DeepRMTrainConfig, "DeepRM", "DeepRM (REINFORCE on the cluster image)",
         "Train DeepRM by REINFORCE with a per-step baseline in DeepRM's environment (M slots, a 20-step image, "
         "jobsets of 50 steps): the jobsets' N episodes run in lockstep. Writes DIR/policy.pt (use it with "
         "--checkpoint deeprm=DIR/policy.pt), config.json and a log of every iteration (mean and maximum total "
         "reward, mean slowdown)."),
        ("deeprm-plus", DeepRMPlusTrainConfig, "DeepRM_Plus", "DeepRM_Plus (SJF cloned into a CNN, then REINFORCE)",
         "Train DeepRM_Plus in DeepRM's environment: Table I's CNN first clones SJF on its state-action pairs "
         "(Algorithm 2), then REINFORCE with DeepRM's per-step baseline improves it (Algorithm 3), on the paper's "
         "Poisson workload (jobsets of 5-50 jobs). Writes DIR/policy.pt (use it with --checkpoint "
         "deeprm-plus=DIR/policy.pt), config.json, clone.json and a log of every iteration."),
    )
    for key, section, title, summary, description in deeprm_commands:
        command = agents.add_parser(key, parents=parents, allow_abbrev=False, help=summary, description=description)
        add_training_sections(command, key, section, title)
        command.set_defaults(run=training_command(
            section, key,
            lambda agent, title=title: f"{title} ({agent.objective}, load {agent.load:g}, {agent.workload} workload, "
                                       f"{agent.mode} sizes, {agent.jobsets} jobsets x {agent.episodes} episodes) "
                                       f"for {agent.iterations} iterations"))
    rlsk = agents.add_parser(
        "rlsk", parents=parents, allow_abbrev=False, help="RLSK (DQN over federated clusters)",
        description="Train RLSK's deep Q-network (replay memory, target network, epsilon-greedy) to send each "
                    "arriving job to one of M clusters or postpone it, on a fixed set of RLSK job sequences "
                    "(section IV-A: Bernoulli arrivals, 3 clusters of 1 cpu and 1 memory, 70 % load). Writes "
                    "DIR/policy.pt (use it with --checkpoint rlsk=DIR/policy.pt), the state to resume from, "
                    "config.json and a log of every epoch (one episode per sequence).")
    add_training_sections(rlsk, "rlsk", RLSKTrainConfig, "RLSK")
    rlsk.set_defaults(run=training_command(
        RLSKTrainConfig, "rlsk",
        lambda agent: f"RLSK by DQN for {agent.timesteps} steps on {agent.sequences} sequences of {agent.jobs} jobs "
                      f"(load {agent.load:g}, {agent.clusters} clusters of {agent.nodes} node(s))"))


def add_training_sections(parser: argparse.ArgumentParser, key: str, section: type, title: str) -> None:
    """A training command's options under ``key``, in two groups: the run's (where and how it writes), then
    the agent's settings (titled ``title``)."""
    settings = agent_setting_names(section)
    add_section(parser, key, section, "where and how it trains",
                only=[f.name for f in dataclasses.fields(section) if f.name not in settings])
    add_section(parser, key, section, title, only=settings)


def training_command(section: type, key: str, describe):
    """The command of one `cloudsim train AGENT` whose options are the config ``section`` (options under
    ``key``): it builds the config, says what it trains (``describe(agent config)``), trains it
    (`cloudsim.run.train.train`) and prints the summary as JSON."""

    def run(namespace: argparse.Namespace) -> int:
        chosen = frozenset(given(namespace, key)) & frozenset(agent_setting_names(section))
        # Made once, from what was given: a config of the defaults alone would check the default --out folder.
        config = section(**parse_given(namespace, key, section), given=chosen)
        print(f"training {describe(config.agent)} into {config.out}{' (resumed)' if config.resume else ''}",
              file=sys.stderr)
        print(strict_json(train(config)), flush=True)
        return 0

    return run


def _deepjs_sections() -> dict:
    """Each section of `TrainConfig` with its defaults, made apart: a `TrainConfig` of the defaults alone would
    check the default --out folder (and refuse to start where it holds a training)."""
    return {f.name: f.default_factory() for f in dataclasses.fields(TrainConfig)}


def _given_agent_settings(namespace: argparse.Namespace) -> frozenset[str]:
    """The DeepJS settings the user chose (DeepJSConfig fields, and "cluster"), which a resumed checkpoint must
    match."""
    chosen = set(given(namespace, "agent")) & set(agent_setting_names(DeepJSTraining))
    if "seed" in given(namespace, "workload"):
        chosen.add("seed")
    if given(namespace, "cluster") or "machine_table" in given(namespace, "workload"):
        chosen.add("cluster")
    return frozenset(chosen)


def run(namespace: argparse.Namespace) -> int:
    if getattr(namespace, "retired", None) is not None:
        raise ConfigError("--checkpoint/--log", namespace.retired, "cloudsim train deepjs writes its checkpoint and "
                          "log into one folder, as every training does: give --out DIR (it writes DIR/policy.pt and "
                          "DIR/log.csv)")
    sections = {key: build(namespace, key, default) for key, default in _deepjs_sections().items()}
    config = TrainConfig(**{**sections, "agent": dataclasses.replace(sections["agent"],
                                                                     given=_given_agent_settings(namespace))})
    print(f"training DeepJS on {config.workload.describe()}, chunks of {config.workload.chunk_size} jobs, into "
          f"{config.agent.out}{' (resumed)' if config.agent.resume else ''}", file=sys.stderr)
    with tqdm(unit="chunk", file=sys.stderr, disable=None) as bar:
        def on_chunk(entry: dict) -> None:
            bar.write(strict_json(entry))
            bar.update()

        summary = train(config, on_chunk)
    print(strict_json(summary), flush=True)
    return 0
