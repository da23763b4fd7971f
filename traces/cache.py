"""The Parquet cache of converted trace tables: a conversion runs once, writes its output batch by batch with a
Parquet writer, and the file is reused while the source file and the options are unchanged.

One entry is one Parquet file, named
``<source stem>.<kind>.<key>.parquet``; its conversion report, its row count
and a random token identifying this build are stored in the file's own
key-value metadata, so report and data can never be out of step (one file, one
atomic rename). The key covers the cache format version, the source's absolute
path, size, modification time (ns) and a SHA-256 of its first and last MiB
(an edit that keeps the size and restores the mtime is still caught when it
touches those blocks), the kind and the options. Writing goes to a temporary
file of a name unique to the process (``.<entry>.<pid>-<random>.tmp``) in the
cache folder, then `os.replace`: two processes converting the same trace at
once both succeed, and a reader never sees a half-written entry. A temporary
file is removed when its conversion fails or is interrupted; one left by a
killed process is removed by the next use of the folder once it has not been
written for an hour (`STALE_SECONDS`). Before an entry is used its Parquet
footer is read and its row count checked against its metadata; a truncated,
unreadable or inconsistent entry is removed and rebuilt, with a one-line note
on stderr. Entries derived from another entry (`cached_derived`, e.g. the job
index of `traces.alibaba`) are keyed by their parent's build token, so a
rebuilt parent never meets a stale child.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "CacheError",
    "DamagedCacheEntry",
    "cache_dir",
    "cached_derived",
    "cached_parquet",
    "discard_entry",
    "entry_token",
    "fingerprint",
    "reading",
]

# 4: numbers read by the one exact parser of every loader (the entries of version 3 were read by it
# too; the bump rebuilds every entry made before the rule was written down).
CACHE_VERSION = 4
# Rows per Parquet row group of a cache entry. A job selection reads whole row groups, so they are
# kept small (a few MB); small CSV blocks are buffered up to this size so that the footer of a
# billion-row table stays a few MB too.
ROW_GROUP_ROWS = 1 << 16
# The fingerprint hashes this many bytes at each end of the source.
FINGERPRINT_BYTES = 1 << 20
# A temporary file not written for this long belongs to a conversion that is gone.
STALE_SECONDS = 3600
_REPORT_KEY, _ROWS_KEY, _TOKEN_KEY = b"cloudsim.report", b"cloudsim.rows", b"cloudsim.token"
_TEMPORARY = re.compile(r"^\..+\.parquet\.\d+-[0-9a-f]{8}\.tmp$|^.+\.[0-9a-f]{16}\.partial$")


class CacheError(OSError, ValueError):
    """The cache folder cannot be used; the message names it and says how to choose another.

    Also a ValueError, so that callers that report bad input as one message report this too.
    """


class DamagedCacheEntry(Exception):
    """A cache entry could not be read as written; the loader discards it and builds it again."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cache entry {path} is damaged ({reason})")
        self.path, self.reason = Path(path), reason


def cache_dir() -> Path:
    """Where converted tables are kept: ``$CLOUDSIM_CACHE``, else ``~/.cache/cloudsim``."""
    return Path(os.environ.get("CLOUDSIM_CACHE", Path.home() / ".cache" / "cloudsim"))


def _cache_error(folder: Path, why: str) -> CacheError:
    return CacheError(f"cache folder {folder} cannot be used ({why}); pass --cache DIR or set CLOUDSIM_CACHE "
                      f"to a folder you can write")


def _folder(directory: str | Path | None) -> Path:
    folder = Path(directory) if directory is not None else cache_dir()
    if folder.exists() and not folder.is_dir():
        raise _cache_error(folder, "it is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _cache_error(folder, err.strerror or str(err)) from None
    _remove_stale(folder)
    return folder


def _remove_stale(folder: Path) -> None:
    """Remove temporary files of conversions that died (not written for `STALE_SECONDS`).

    Only names this module writes are touched (the folder may be shared, ``--cache /tmp``):
    ``.<entry>.parquet.<pid>-<8 hex>.tmp``, and ``<entry>.<16 hex>.partial`` of cache version 1.
    """
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if _TEMPORARY.match(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
                        os.unlink(entry.path)


def fingerprint(path: Path) -> list:
    """Size, mtime (ns) and a SHA-256 of the first and last `FINGERPRINT_BYTES` of the file."""
    stat = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        if stat.st_size > FINGERPRINT_BYTES:
            handle.seek(max(FINGERPRINT_BYTES, stat.st_size - FINGERPRINT_BYTES))
            digest.update(handle.read(FINGERPRINT_BYTES))
    return [stat.st_size, stat.st_mtime_ns, digest.hexdigest()]


def _key(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_entry(path: Path, schema: pa.Schema | None) -> dict | None:
    """The entry's report, None when there is no entry; raises DamagedCacheEntry when it is unusable."""
    try:
        with pq.ParquetFile(path) as handle:
            meta = handle.metadata
            kv = meta.metadata or {}
            if _REPORT_KEY not in kv or _ROWS_KEY not in kv or _TOKEN_KEY not in kv:
                raise DamagedCacheEntry(path, "no conversion report in its metadata")
            report = json.loads(kv[_REPORT_KEY])
            rows = int(kv[_ROWS_KEY])
            if meta.num_rows != rows:
                raise DamagedCacheEntry(path, f"{meta.num_rows} rows where its report says {rows}")
            if schema is not None and not handle.schema_arrow.remove_metadata().equals(schema.remove_metadata()):
                raise DamagedCacheEntry(path, "its columns are not those of this version")
            return report
    except FileNotFoundError:
        return None
    except DamagedCacheEntry:
        raise
    except (OSError, ValueError, pa.ArrowException) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DamagedCacheEntry(path, reason) from None


def _identity(path: Path) -> tuple | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def discard_entry(path: Path, reason: str, identity: tuple | None = None) -> None:
    """Remove a damaged entry, saying so on stderr, so that the next use builds it again.

    With ``identity`` (see `_identity`) the file is removed only if it is still the one found
    damaged: another process may have put a good one in its place meanwhile.
    """
    print(f"cloudsim: cache entry {path} was damaged ({reason}); rebuilding", file=sys.stderr, flush=True)
    if identity is None or _identity(path) == identity:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def entry_token(handle: pq.ParquetFile) -> str:
    """The random token of one build of a cache entry (derived entries are keyed by it)."""
    return (handle.metadata.metadata or {}).get(_TOKEN_KEY, b"").decode()


def _build(target: Path, schema: pa.Schema | None, produce: Callable[[Callable[[pa.Table], None]], dict]) -> dict:
    """Run ``produce(write)`` into a temporary file, then move it into place atomically."""
    if not hasattr(pq.ParquetWriter, "add_key_value_metadata"):
        raise RuntimeError("the trace cache needs pyarrow >= 17 (ParquetWriter.add_key_value_metadata)")
    temporary = target.parent / f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    state = {"writer": None, "rows": 0, "buffer": [], "buffered": 0}

    def flush(final: bool) -> None:
        if not state["buffer"]:
            return
        table = pa.concat_tables(state["buffer"])
        full = table.num_rows if final else table.num_rows - table.num_rows % ROW_GROUP_ROWS
        if full:
            state["writer"].write_table(table.slice(0, full), row_group_size=ROW_GROUP_ROWS)
        rest = table.slice(full)
        state["buffer"], state["buffered"] = ([rest], rest.num_rows) if rest.num_rows else ([], 0)

    def write(table: pa.Table) -> None:
        if state["writer"] is None:
            try:
                state["writer"] = pq.ParquetWriter(temporary, schema if schema is not None else table.schema)
            except OSError as err:
                raise _cache_error(target.parent, err.strerror or str(err)) from None
        table = table.cast(state["writer"].schema) if schema is not None else table
        state["rows"] += table.num_rows
        state["buffer"].append(table)
        state["buffered"] += table.num_rows
        if state["buffered"] >= ROW_GROUP_ROWS:
            flush(final=False)

    try:
        report = produce(write)
        if state["writer"] is None:  # nothing written: an empty entry still has its schema
            if schema is None:
                raise ValueError(f"cache entry {target.name}: nothing to write and no schema")
            write(schema.empty_table())
        flush(final=True)
        state["writer"].add_key_value_metadata({
            _REPORT_KEY: json.dumps(report, sort_keys=True), _ROWS_KEY: str(state["rows"]),
            _TOKEN_KEY: secrets.token_hex(8)})
        state["writer"].close()
        state["writer"] = None
        try:
            os.replace(temporary, target)
        except OSError as err:
            raise _cache_error(target.parent, err.strerror or str(err)) from None
        return report
    finally:
        if state["writer"] is not None:
            with contextlib.suppress(Exception):
                state["writer"].close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _entry(target: Path, schema: pa.Schema | None, produce) -> tuple[Path, dict]:
    identity = _identity(target)
    try:
        report = _check_entry(target, schema)
    except DamagedCacheEntry as damaged:
        discard_entry(target, damaged.reason, identity)
        report = None
    if report is None:
        report = _build(target, schema, produce)
    return target, report


def cached_parquet(
    source: str | Path,
    kind: str,
    options: Mapping[str, object],
    convert: Callable[[Callable[[pa.Table], None]], dict],
    schema: pa.Schema,
    directory: str | Path | None = None,
) -> tuple[Path, dict]:
    """Return (parquet path, conversion report), converting ``source`` only when no valid cache exists.

    The cache key covers the source's absolute path and fingerprint (size,
    mtime, hash of its first and last MiB), ``kind``, ``options`` and the cache
    format version. ``convert`` is called with a ``write(table)`` function for
    each cleaned batch and returns a JSON-ready report (row counts, skips by
    reason), stored in the Parquet file's metadata. A damaged entry is rebuilt
    (see the module docstring). Raises `CacheError` when the folder cannot be
    created or written.
    """
    source = Path(source).resolve()
    folder = _folder(directory)
    key = _key([CACHE_VERSION, str(source), fingerprint(source), kind, dict(options)])
    return _entry(folder / f"{source.stem}.{kind}.{key}.parquet", schema, convert)


def cached_derived(
    parent: pq.ParquetFile,
    parent_path: Path,
    kind: str,
    options: Mapping[str, object],
    build: Callable[[Callable[[pa.Table], None]], dict],
    schema: pa.Schema | None = None,
) -> tuple[Path, dict]:
    """Like `cached_parquet`, for an entry computed from another entry (open as ``parent``).

    It lies beside its parent, keyed by the parent's build token: rebuilding the
    parent makes a new derived entry. ``schema`` None: that of the first table written.
    """
    parent_path = Path(parent_path)
    key = _key([CACHE_VERSION, parent_path.name, entry_token(parent), kind, dict(options)])
    stem = parent_path.name.split(".", 1)[0]
    return _entry(parent_path.parent / f"{stem}.{kind}.{key}.parquet", schema, build)


@contextlib.contextmanager
def reading(path: Path):
    """Turn an error while reading cache entry ``path`` into DamagedCacheEntry (the caller rebuilds)."""
    try:
        yield
    except (OSError, pa.ArrowException) as err:
        if isinstance(err, CacheError):
            raise
        if isinstance(err, FileNotFoundError):
            reason = "it was removed while in use, perhaps by another process rebuilding it"
        else:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DamagedCacheEntry(path, reason) from None
