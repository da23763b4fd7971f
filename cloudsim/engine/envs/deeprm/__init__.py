"""DeepRM's environment (Mao et al., HotNets 2016), exactly as its published code behaves, batched.

DeepRM schedules jobs on one pool of ``res_slot`` units per resource in discrete
time steps, over an image of the next ``horizon`` steps. Its published code
(Python 2, Theano) is the reference every later paper compares with, quirks
included; docs/papers/deeprm.md ("How the published code behaves") states how it
behaves, and this module matches it job by job (start and finish of every job,
every step's reward, the step at which the episode ends).

Why a model of its own rather than the event-driven `Simulation`: DeepRM's time
is a step counter, a job may be placed at a future offset of a 20-step horizon,
and the code's list handling leaves some finished jobs in the machine for one
more step (charged in the reward, and delaying the end). Matching that exactly,
and running the 2,000 episodes of one training iteration in lockstep with one
batched forward per step, asks for numpy arrays over a batch of episodes; the
engine's per-decision SimPy rounds would be both inexact and 100x too slow here.

The model in brief (``B`` episodes at once, each on its own jobset):

* State: ``avbl[b, t, i]``, free units of resource ``i`` at offset ``t`` from now;
  the running jobs (in allocation order); ``slots`` visible job slots; a FIFO
  backlog of ``backlog`` jobs; the steps since a job last arrived (capped at 10).
* Action ``a < slots``: allocate the job of slot ``a`` at the earliest offset
  ``t < horizon - len`` at which it fits for its whole length; the slot is
  refilled from the backlog's head, time does not move and the reward is 0.
  Any other action (``a == slots``, the void action; an empty slot; a job that
  fits nowhere) moves time on by one step: the horizon shifts, finished jobs
  leave, the job of the next sequence index arrives (to the lowest empty slot,
  else the backlog, else it is dropped and counted) and the step's reward is
  paid: ``-sum 1/len`` over the jobs in the system (objective ``slowdown``),
  ``-(number of jobs)`` (``completion``) or ``-1`` while any job is in the system
  (``makespan``).
* ``mode="code"``: job sizes as the code draws them (0.5-1.0 and 0.1-0.2 of a
  resource), the job of sequence index 0 never arrives, and finished jobs leave
  the running list as the code's remove-while-iterating loop lets them (a
  finished job right after a removed one stays one more step).
  ``mode="paper"``: section 4.1's sizes (0.25r-0.5r dominant, 0.05r-0.1r other,
  on 20 units per resource so that 0.05r is one unit), index 0 arrives at time 0
  and finished jobs always leave; a step's reward is charged for the jobs in the
  system while it passes (so a job arriving at time 0 is charged too), which
  makes the rewards add up to minus the slowdowns exactly.

The package's modules: `params` (`DeepRMParams`, load and rate), `jobsets` (the workloads),
`batch` (`DeepRMBatch`, the model), `render` (the image), `heuristics` (the papers' baselines as
batched actions) and `env` (`DeepRMEnv`, the Gymnasium environment). Everything is importable from here.
"""

from cloudsim.engine.envs.deeprm.params import (ENDS, MODES, OBJECTIVES, SMALL_JOB_CHANCE, DeepRMParams, load_for_rate,
                                         rate_for_load)
from cloudsim.engine.envs.deeprm.jobsets import (ARRIVALS, POISSON_JOBS, arrival_rate, deeprm_jobsets, jobsets_at_load,
                                          poisson_jobsets, poisson_rate_for_load)
from cloudsim.engine.envs.deeprm.render import render_bits, render_image
from cloudsim.engine.envs.deeprm.batch import DeepRMBatch
from cloudsim.engine.envs.deeprm.heuristics import (DEEPRM_HEURISTICS, fcfs_actions, hrrn_actions, packer_actions,
                                             random_actions, sjf_actions, tetris_star_actions)
from cloudsim.engine.envs.deeprm.env import DeepRMEnv

__all__ = ["DeepRMParams", "DeepRMBatch", "DeepRMEnv", "deeprm_jobsets", "poisson_jobsets", "rate_for_load",
           "load_for_rate", "poisson_rate_for_load", "POISSON_JOBS", "ARRIVALS", "arrival_rate", "jobsets_at_load",
           "render_image", "render_bits", "sjf_actions", "packer_actions", "tetris_star_actions", "fcfs_actions",
           "hrrn_actions", "random_actions", "DEEPRM_HEURISTICS", "MODES", "OBJECTIVES", "ENDS", "SMALL_JOB_CHANCE"]
