"""One DeepRM_Plus training update on each device this machine has: the CPU, and CUDA when torch sees a GPU.

The update is `agents.deeprm.agent.update` on an iteration's worth of images (``--images``, default 14,600: 25
jobsets x 5 episodes of a 140 % training), forward and backward in the network's chunks of 1,024, the
same work `cloudsim train deeprm-plus --device ...` does once an iteration. Median of ``--repeats``
after one warm-up; the GPU is synchronised before each clock read. Writes JSON.

    python benchmarks/device_speed.py --out benchmarks/results/device_speed.json

It calls `agents.deeprm.agent.update` directly, not `cloudsim.run`, because it times the update alone, on random
snapshots and with the GPU synchronised around it, apart from the rollouts a training also runs.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from agents.deeprm.agent import Rollout, make_net, update
from agents.deeprm.config import DeepRMConfig
from cloudsim.engine.envs.deeprm import DeepRMBatch


def snapshot(config: DeepRMConfig, rows: int, seed: int) -> dict[str, np.ndarray]:
    """``rows`` random DeepRM snapshots (images of random fill, slots and backlog), as a rollout keeps them."""
    p, rng = config.env_params(), np.random.default_rng(seed)
    return {"used": rng.integers(0, p.res_slot + 1, (rows, p.horizon, p.resources)),
            "slot_len": rng.integers(0, p.max_job_len + 1, (rows, p.slots)),
            "slot_size": rng.integers(0, p.max_job_size + 1, (rows, p.slots, p.resources)),
            "backlog_n": rng.integers(0, p.backlog + 1, rows),
            "since_new": rng.integers(0, p.max_track_since_new + 1, rows)}


def measure(device: torch.device, rows: int, repeats: int) -> dict:
    config = DeepRMConfig(network="cnn", workload="poisson", load=1.4)
    torch.manual_seed(0)
    net = copy.deepcopy(make_net(config)).to(device)
    optimiser = torch.optim.RMSprop(net.parameters(), lr=config.learning_rate, alpha=config.rms_decay,
                                    eps=config.rms_eps)
    rng = np.random.default_rng(1)
    batch = DeepRMBatch(config.env_params(), *config.draw_jobsets(1, 1))
    roll = Rollout(np.zeros(rows, dtype=np.int64), np.arange(rows), snapshot(config, rows, 2),
                   rng.integers(0, config.slots + 1, rows), rng.normal(size=rows), batch)
    advantages = rng.normal(size=rows)
    times = []
    for k in range(repeats + 1):  # the first is a warm-up
        if device.type == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        update(net, optimiser, roll, advantages)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if k:
            times.append(time.perf_counter() - started)
    return {"device": str(device), "name": torch.cuda.get_device_name(device) if device.type == "cuda"
            else platform.processor() or platform.machine(), "threads": torch.get_num_threads(),
            "update_s_median": statistics.median(times), "update_s": times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=14_600, help="images in the update (default 14,600)")
    parser.add_argument("--repeats", type=int, default=3, help="timed updates per device (default 3)")
    parser.add_argument("--out", type=Path, help="write the JSON here too")
    args = parser.parse_args()
    if args.images < 1 or args.repeats < 1:
        parser.error("--images and --repeats must be 1 or more")
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    results = {"torch": torch.__version__, "images": args.images,
               "measured": [measure(device, args.images, args.repeats) for device in devices]}
    if len(results["measured"]) == 2:
        results["cpu_over_cuda"] = (results["measured"][0]["update_s_median"]
                                    / results["measured"][1]["update_s_median"])
    text = json.dumps(results, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
