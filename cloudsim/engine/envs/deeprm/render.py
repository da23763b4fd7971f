"""DeepRM's observation: the image of a `DeepRMBatch.snapshot` (cluster, slots, backlog, time since
the last arrival)."""

from __future__ import annotations

import numpy as np

from cloudsim.engine.envs.deeprm.params import DeepRMParams


def render_image(snap: dict[str, np.ndarray], params: DeepRMParams) -> np.ndarray:
    """Draw DeepRM's image from a `DeepRMBatch.snapshot` (leading batch axis).

    Row r is offset r. Per resource: the cluster's ``res_slot`` columns, whose
    first ``used`` cells of a row are occupied, then ``slots`` blocks of
    ``max_job_size`` columns (rows below the job's length, columns below its
    demand); then the backlog block (``ceil(backlog / T)`` columns filled row by
    row) and one column holding the steps since the last arrival / 10. The code
    paints each job in the cluster in its own shade; here occupancy is 1 (the
    code's image > 0).
    """
    return render_bits(snap, params).astype(np.float32) / _column_scale(params)


def render_bits(snap: dict[str, np.ndarray], params: DeepRMParams) -> np.ndarray:
    """`render_image` as integers (B, T, width) uint8: cells 0/1, the last column the steps since an arrival."""
    p = params
    T, R, M, S, C = p.horizon, p.resources, p.slots, p.max_job_size, p.res_slot
    used, slot_len, slot_size = snap["used"], snap["slot_len"], snap["slot_size"]
    B = used.shape[0]
    out = np.empty((B,) + p.image_shape, dtype=np.uint8)
    rows, cols = np.arange(T), np.arange(max(C, S))
    tall = rows[None, :, None, None] < slot_len[:, None, :, None]  # (B, T, M, 1)
    width = C + M * S
    for i in range(R):
        out[:, :, i * width:i * width + C] = cols[None, None, :C] < used[:, :, i, None]
        blocks = out[:, :, i * width + C:(i + 1) * width].reshape(B, T, M, S)
        np.logical_and(tall, cols[None, None, None, :S] < slot_size[:, None, :, i, None], out=blocks.view(bool))
    bw = p.backlog_width
    cells = rows[:, None] * bw + np.arange(bw)[None, :]
    out[:, :, R * width:R * width + bw] = cells[None] < snap["backlog_n"][:, None, None]
    out[:, :, -1] = snap["since_new"][:, None]
    return out


def _column_scale(params: DeepRMParams) -> np.ndarray:
    """Divide `render_bits` by this to get `render_image`: 1 everywhere but the last column's cap."""
    scale = np.ones(params.image_shape[1], dtype=np.float32)
    scale[-1] = params.max_track_since_new
    return scale
