"""A trained DeepRM or DeepRM_Plus network in numpy: the forward every DeepRM policy acts with.

Both the broker of the core (`agents.deeprm.broker.DeepRMBroker`) and the policy in DeepRM's own
environment (`agents.deeprm.DeepRMPolicy`) compute their logits here, through `cloudsim.engine.arithmetic`
(sums in a fixed order), so that an action is the same bits on every processor; training keeps torch's
forward (`agents.deeprm.DeepRMNet`, `agents.deeprm.plus.DeepRMPlusNet`), of which this is the same network.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from cloudsim.engine import arithmetic
from cloudsim.engine.envs.deeprm import DeepRMParams, render_image

__all__ = ["NumpyDeepRM"]


@dataclass(frozen=True)
class NumpyDeepRM:
    """A trained DeepRM or DeepRM_Plus network as numpy arrays: ``logits(snapshot)`` is the network's
    ``logits_snapshot`` (`agents.deeprm.DeepRMNet`, `agents.deeprm.plus.DeepRMPlusNet`) without torch.

    Brokers run in worker processes forked from the one that loaded them; torch's thread pool does not
    survive a fork (a worker's first parallel torch operation can hang), so decisions use numpy only.
    """

    params: DeepRMParams
    weights: dict[str, np.ndarray]
    network: str  # "dense" (DeepRM) or "cnn" (DeepRM_Plus)

    @functools.cached_property
    def _tables(self) -> dict:
        """DeepRM's hidden layer as prefix sums over each part of the image (`DeepRMNet.prefix_tables`)."""
        p = self.params
        T, R, M, S, C = p.horizon, p.resources, p.slots, p.max_job_size, p.res_slot
        W = self.weights["hidden.weight"]
        H = W.shape[0]
        W = W.reshape(H, T, -1)
        width = C + M * S
        canvas, blocks = [], []
        for i in range(R):
            part = W[:, :, i * width:i * width + C].transpose(1, 2, 0)  # (T, C, H)
            canvas.append(np.concatenate([np.zeros((T, 1, H)), part.cumsum(1)], 1))
            block = W[:, :, i * width + C:(i + 1) * width].reshape(H, T, M, S).transpose(2, 1, 3, 0)  # (M, T, S, H)
            blocks.append(np.pad(block.cumsum(1).cumsum(2), ((0, 0), (1, 0), (1, 0), (0, 0))))
        bw = p.backlog_width
        backlog = W[:, :, R * width:R * width + bw].reshape(H, T * bw).T
        return {"canvas": canvas, "blocks": blocks, "backlog": np.concatenate([np.zeros((1, H)), backlog.cumsum(0)]),
                "since": W[:, :, -1].cumsum(1)[:, -1]}  # cumsum: a sum in order

    def logits(self, snap: dict[str, np.ndarray]) -> np.ndarray:
        """(B, slots + 1) logits of the images a snapshot (`DeepRMBatch.snapshot`) draws."""
        w, dense = self.weights, self._dense
        if self.network == "cnn":
            image = render_image(snap, self.params)[:, None]
            x = _avg_pool(np.maximum(arithmetic.conv2d(image, w["features.0.weight"], w["features.0.bias"]), 0))
            x = _avg_pool(np.maximum(arithmetic.conv2d(x, w["features.3.weight"], w["features.3.bias"]), 0))
            h = arithmetic.tanh(arithmetic.dense(x.reshape(len(x), -1), *dense["hidden"]))
            return arithmetic.dense(h, *dense["out"])
        t, p = self._tables, self.params
        rows, slots = np.arange(p.horizon), np.arange(p.slots)
        h = np.broadcast_to(w["hidden.bias"], (len(snap["used"]), len(w["hidden.bias"]))).copy()
        for i in range(p.resources):  # cumsum(...)[:, -1]: a sum in row (slot) order, whatever numpy's version
            h += t["canvas"][i][rows[None, :], snap["used"][:, :, i]].cumsum(1)[:, -1]
            h += t["blocks"][i][slots[None, :], snap["slot_len"], snap["slot_size"][:, :, i]].cumsum(1)[:, -1]
        h += t["backlog"][snap["backlog_n"]]
        h += (snap["since_new"] / p.max_track_since_new)[:, None] * t["since"][None, :]
        return arithmetic.dense(np.maximum(h, 0), *dense["out"])

    @functools.cached_property
    def _dense(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The dense layers' (weights as inputs x outputs, bias), laid out once for `arithmetic.dense`."""
        w = self.weights
        return {name: (np.ascontiguousarray(w[f"{name}.weight"].T), np.ascontiguousarray(w[f"{name}.bias"]))
                for name in ("hidden", "out") if f"{name}.weight" in w}


def _avg_pool(x: np.ndarray) -> np.ndarray:
    """2 x 2 average pooling with stride 2, a trailing odd row or column dropped (torch's AvgPool2d(2))."""
    h, w = x.shape[2] // 2 * 2, x.shape[3] // 2 * 2
    return (x[:, :, 0:h:2, 0:w:2] + x[:, :, 1:h:2, 0:w:2] + x[:, :, 0:h:2, 1:w:2] + x[:, :, 1:h:2, 1:w:2]) / 4
