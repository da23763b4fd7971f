"""The ``cloudsim`` command line: a thin layer over `cloudsim.run`, one module per command.

    cloudsim replay                                  # built-in Alibaba-like workload
    cloudsim replay jobs.csv --format cloudsimpy --chunk-size 10 --chunks 0:100 \\
        --machines 5 --capacity cpu=64,memory=1,disk=1 --broker first-fit --tick 1 --json
    cloudsim compare deeprm --brokers sjf,packer,tetris-star --loads 0.1:1.9:0.2 --seeds 10 --out report/
    cloudsim train deepjs jobs.csv --chunk-size 10 --chunks 0:200 --out runs/deepjs

Every mistake ends in one line on stderr that names the culprit and the fix, and a
non-zero exit: 2 for options that cannot work, 1 for everything else (a damaged
trace, a bad checkpoint, a full disk), 130 for Ctrl-C, 143 for SIGTERM, 141 when
the output is closed early (``| head``). ``--debug`` (or
``CLOUDSIM_DEBUG=1``) shows the traceback instead, for bug reports.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
import traceback
import warnings
import zlib
from typing import Sequence

from cloudsim.engine.foreign import BrokerError
from cloudsim.engine.installation import shadowing_problem
from cloudsim.version import __version__

__all__ = ["build_parser", "main"]

PROG = "cloudsim"


def _commands() -> tuple:
    """The command modules, imported when first asked for (after `shadowing_problem` is checked: they import
    ``agents`` and ``traces``)."""
    from cloudsim.cli import bench, brokers, check_broker, compare, leaderboard, plot, replay, train, tune

    return replay, compare, bench, train, plot, leaderboard, tune, brokers, check_broker


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback of an error (also: CLOUDSIM_DEBUG=1)")
    parser = argparse.ArgumentParser(prog=PROG, parents=[common], allow_abbrev=False,
                                     description="Datacenter job-scheduling simulator.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}",
                        help="print the version and exit (results record it too: summary.json, summary.md)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in _commands():
        command.add_parser(commands, [common])
    return parser


def _message(error: BaseException) -> str:
    """One line for the user: what went wrong, naming the file or option, and what to do."""
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        where = f" writing {error.filename}" if error.filename else ""
        return f"no space left on the device{where}: free some space, or write elsewhere (--out, --cache)"
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    if isinstance(error, (EOFError, zlib.error)):
        return f"a compressed file ended early or is damaged ({error}); download or compress it again"
    if isinstance(error, BrokerError):
        return f"{error}; fix the broker (run again with --debug for its traceback)"
    return str(error) or type(error).__name__


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: workers stopped, finished results kept aside, one line."""


def _terminate(signum, frame) -> None:
    raise Terminated()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse's own usage errors exit with 2)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    problem = shadowing_problem()
    if problem is not None:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    from cloudsim.run import ConfigError

    namespace = build_parser().parse_args(argv)
    namespace.argv = argv  # for reports to say how they were made
    debug = getattr(namespace, "debug", False) or os.environ.get("CLOUDSIM_DEBUG", "") not in ("", "0")
    previous = warnings.showwarning
    warnings.showwarning = _show_warning
    previous_term = signal.signal(signal.SIGTERM, _terminate)
    try:
        return namespace.run(namespace)
    except Terminated as error:
        _report("terminated", error)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt as error:
        _report("interrupted", error)
        return 130
    except BrokenPipeError as error:  # output piped into `head` and the like: stop, and say the run is cut
        _report("stopped: the output was closed before the run ended (broken pipe)", error)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 128 + signal.SIGPIPE
    except MemoryError as error:
        _report(f"out of memory ({error}); ask for less at once: fewer jobs (--synthetic-jobs, --jobs, "
                "--chunk-size), machines, seeds or loads", error)
        return 1
    except ConfigError as error:
        if debug:
            traceback.print_exc()
        _report(_message(error), error)
        return 2
    except (ValueError, OSError, EOFError, zlib.error, RuntimeError) as error:
        # The library's errors for bad input: a trace, a checkpoint, a file, a stalled broker.
        if debug:
            traceback.print_exc()
        _report(_message(error), error)
        return 1
    except Exception as error:  # a bug: say so, and how to get the details
        if debug:
            traceback.print_exc()
        _report(f"internal error: {type(error).__name__}: {error} (run again with --debug for the traceback, "
                "and report it)", error)
        return 1
    finally:
        warnings.showwarning = previous
        signal.signal(signal.SIGTERM, previous_term)


def _report(message: str, error: BaseException) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)
    for note in getattr(error, "__notes__", ()):
        print(f"{PROG}: {note}", file=sys.stderr)
