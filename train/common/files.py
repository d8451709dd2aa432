"""Reading the files a command is given, and writing run files so that none is left half-written.

Reading: every file a command reads (a game record, a config, a run's progress)
goes through ``read_text_file``, ``read_json_file`` or ``read_csv_rows`` and is
then checked against its schema (``check_fields`` for flat JSON objects). Any
problem, from a missing file to bytes that are not UTF-8, JSON nested too
deeply or a field of the wrong type, raises ``FileFormatError``: a ValueError
whose message is one line that starts with the file's path and says what is
wrong and what was expected. ``jekyll-hyde`` prints that line and exits with
status 2. Another module's reader uses the same pieces::

    from jekyll_hyde_train.common.files import FileFormatError, check_fields, read_json_file

    data = read_json_file(path, "a run's progress file (JSON)")
    check_fields(path, data, {"generation": "count", "finished": "flag"})

Writing: ``atomic_write_bytes``/``atomic_write_text`` write a temporary file,
flush it to disk and rename it over the target; ``replace_folder`` swaps a
whole folder in. A failed write (a full disk, say) removes its temporary file,
leaves the previous version in place and raises ``WriteError``, an OSError that
names the file. ``run_write_error`` turns it into the one-line ``RunWriteError``
that tells how to continue the run.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import pathlib
import shutil
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

MAX_TEXT_BYTES = 64 * 2**20  # far above any record, config or progress file
MAX_DEPTH = 64  # nesting of JSON (and YAML) containers; the files here need fewer than 10


class FileFormatError(ValueError):
    """A file that cannot be used: missing, unreadable, not the format, or not its schema.

    The message is one line, ``<path>: <problem>``; ``path`` and ``problem`` are
    kept apart too.
    """

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = str(path)
        self.problem = one_line(problem)
        super().__init__(f"{self.path}: {self.problem}")


def folder_slug(text: str) -> str:
    """A folder name made from ``text`` (an agent name, a path): its letters, digits
    and ``-_.``, the rest as ``_``, the last 60 characters."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text.strip("/"))[-60:]


def one_line(text: str) -> str:
    """``text`` with its line breaks and runs of spaces folded to single spaces."""
    return " ".join(str(text).split())


def read_text_file(path: str | os.PathLike, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of ``path``, which should hold ``what`` (``"a game record (JSON)"``).

    Raises:
        FileFormatError: no such file, a folder, unreadable, larger than
            ``max_bytes``, empty, or not UTF-8.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise FileFormatError(path, f"no such file; expected {what}") from None
    except IsADirectoryError:
        raise FileFormatError(path, f"that is a folder; expected {what}") from None
    except OSError as error:
        raise FileFormatError(path, f"cannot read it ({error.strerror}); expected {what}") from None
    return text_of_bytes(path, data, what, max_bytes)


def text_of_bytes(
    path: str | os.PathLike, data: bytes, what: str, max_bytes: int = MAX_TEXT_BYTES
) -> str:
    """``data`` (read from ``path``, or from a member of it) as UTF-8 text holding ``what``.

    Raises:
        FileFormatError: larger than ``max_bytes``, empty, or not UTF-8.
    """
    if len(data) > max_bytes:
        raise FileFormatError(path, f"larger than {max_bytes:,} bytes, far too large for {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileFormatError(
            path,
            f"not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); "
            f"expected {what}",
        ) from None
    if not text.strip():
        raise FileFormatError(path, f"the file is empty; expected {what}")
    return text


def read_json_file(
    path: str | os.PathLike,
    what: str,
    max_bytes: int = MAX_TEXT_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """The JSON value in ``path`` (``what`` says what it should be, for the messages).

    Nesting is bounded while parsing (the decoder's recursion limit) and
    after it (``max_depth``), so a file of a million brackets is refused in a
    line; so is an integer too long for Python to read (over 4,300 digits).
    Only the syntax is checked here; the caller checks the schema.

    Raises:
        FileFormatError: ``read_text_file``'s problems, invalid JSON, or JSON
            nested deeper than ``max_depth``.
    """
    return parse_json_text(path, read_text_file(path, what, max_bytes), what, max_depth)


def read_json_bytes(
    path: str | os.PathLike,
    data: bytes,
    what: str,
    max_bytes: int = MAX_TEXT_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """``read_json_file`` for bytes already read, such as a member of an archive;
    ``path`` names them in the messages (``"run/checkpoint.zip: resume.json"``)."""
    return parse_json_text(path, text_of_bytes(path, data, what, max_bytes), what, max_depth)


def parse_json_text(
    path: str | os.PathLike, text: str, what: str, max_depth: int = MAX_DEPTH
) -> Any:
    """The JSON value of ``text``, read from ``path`` (see ``read_json_file``).

    Raises:
        FileFormatError: invalid JSON, an integer over Python's 4,300 digits, or
            JSON nested deeper than ``max_depth``.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise FileFormatError(
            path,
            f"not valid JSON ({error.msg} at line {error.lineno} column {error.colno}); "
            f"expected {what}",
        ) from None
    except ValueError as error:  # an integer of more digits than int() reads
        raise FileFormatError(
            path, f"not readable JSON ({one_line(str(error)).split(';')[0]}); expected {what}"
        ) from None
    except RecursionError:
        data = None
        depth = max_depth + 1
    else:
        depth = nesting_depth(data, max_depth)
    if depth > max_depth:
        raise FileFormatError(path, f"JSON nested deeper than {max_depth} levels; expected {what}")
    return data


def read_zip_member(
    path: str | os.PathLike, archive: zipfile.ZipFile, name: str, what: str, max_bytes: int
) -> bytes:
    """The bytes of member ``name`` of ``archive`` (the zip file ``path``, which should
    be ``what``). Its size as the archive declares it is checked before anything is
    unpacked, so a small file that would unpack to gigabytes is refused at once.

    Raises:
        FileFormatError: no such member, larger than ``max_bytes``, or damaged.
    """
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise FileFormatError(path, f"it has no member {name}; expected {what}") from None
    too_large = f"its member {name} unpacks to more than {max_bytes:,} bytes; expected {what}"
    if info.file_size > max_bytes:
        raise FileFormatError(path, too_large)
    try:
        with archive.open(info) as member:
            data = member.read(max_bytes + 1)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as error:
        raise FileFormatError(
            path, f"its member {name} is damaged ({one_line(str(error))[:160]}); expected {what}"
        ) from None
    if len(data) > max_bytes:
        raise FileFormatError(path, too_large)
    return data


def nesting_depth(data: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply lists and dicts nest in ``data`` (a scalar: 0), counted without
    recursion; the count stops just past ``limit``."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


# What ``check_fields`` accepts for each kind of field, and how a message says it.
FIELD_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "count": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "a whole number >= 0",
    ),
    "seconds": (
        lambda v: (
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
        ),
        "a finite number >= 0",
    ),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
    "finite": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
        "a finite number",
    ),
    "number": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "a number",
    ),
    "flag": (lambda v: isinstance(v, bool), "true or false"),
    "text": (lambda v: isinstance(v, str), "a string"),
    "text or null": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "mapping": (lambda v: isinstance(v, Mapping), "a JSON object"),
    "list": (lambda v: isinstance(v, list), "a list"),
}


def describe(value: Any) -> str:
    """A short form of a value for a message: its repr, cut, and its JSON type."""
    kinds = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}
    kind = "object" if isinstance(value, Mapping) else kinds.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{text} ({kind})"


def check_fields(
    path: str | os.PathLike,
    data: Any,
    fields: Mapping[str, str],
    optional: tuple[str, ...] = (),
    where: str = "",
) -> dict[str, Any]:
    """Check that ``data`` is a JSON object with exactly the keys of ``fields``
    (those in ``optional`` may be missing), each value of its kind (``FIELD_KINDS``:
    count, seconds, integer, finite, number, flag, text, mapping, list).

    Args:
        where: the object's place in the file, for the messages (``"history[3]"``).

    Returns:
        ``data``, as a dict.

    Raises:
        FileFormatError: naming the first key that is missing, unknown or of the
            wrong kind.
    """
    place = f"{where} " if where else ""
    if not isinstance(data, Mapping):
        raise FileFormatError(
            path, f"{place or 'the file '}must be a JSON object, got {describe(data)}"
        )
    unknown = [str(key) for key in data if key not in fields]
    if unknown:
        raise FileFormatError(
            path, f"{place}has unknown keys {unknown}; the keys are {list(fields)}"
        )
    for key, kind in fields.items():
        if key not in data:
            if key in optional:
                continue
            raise FileFormatError(path, f"{place}lacks the key {key!r}")
        accepts, expected = FIELD_KINDS[kind]
        if not accepts(data[key]):
            name = f"{where}.{key}" if where else key
            raise FileFormatError(path, f"{name} must be {expected}, got {describe(data[key])}")
    return dict(data)


def read_csv_rows(
    path: str | os.PathLike,
    what: str,
    columns: Mapping[str, type],
    required: tuple[str, ...] = (),
    others: type = str,
    optional: tuple[str, ...] = (),
) -> list[dict[str, str]]:
    """The rows of a CSV file with a header, each checked.

    Args:
        columns: column -> int, float or str: the column must be in the header,
            and each row's value must read as that type (or be empty).
        required: columns that no row may leave empty.
        others: the type of the header's other columns (str: anything).
        optional: columns of ``columns`` that the header may lack.

    Raises:
        FileFormatError: ``read_text_file``'s problems, a malformed row, a
            missing column, or a value that is not of its column's type.
    """
    text = read_text_file(path, what)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        missing = [name for name in columns if name not in header and name not in optional]
        if missing:
            raise FileFormatError(path, f"lacks the columns {missing}; expected {what}")
        kinds = {name: columns.get(name, others) for name in header}
        rows = []
        for line, row in enumerate(reader, start=2):
            if None in row or None in row.values():
                raise FileFormatError(
                    path, f"line {line} does not have the header's {len(header)} fields"
                )
            for name, kind in kinds.items():
                value = row[name]
                if not value:
                    if name in required:
                        raise FileFormatError(path, f"line {line}: {name} is empty")
                    continue
                if kind is not str and not _reads_as(value, kind):
                    expected = "a whole number" if kind is int else "a number"
                    raise FileFormatError(
                        path, f"line {line}: {name} must be {expected}, got {value[:40]!r}"
                    )
            rows.append(row)
    except csv.Error as error:
        raise FileFormatError(path, f"not valid CSV ({error}); expected {what}") from None
    return rows


def _reads_as(text: str, kind: type) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


# --- writing --------------------------------------------------------------------------


class WriteError(OSError):
    """Writing a file failed; ``filename`` is the file (or folder) being written."""


class RunWriteError(RuntimeError):
    """A training run stopped because one of its files could not be written; the
    message (one line) names the file and says how to continue the run."""


def _write_error(error: OSError, path: str | os.PathLike) -> WriteError:
    return WriteError(error.errno, error.strerror or str(error), str(path))


@contextmanager
def writing(path: str | os.PathLike) -> Iterator[None]:
    """Turn an OSError raised inside the block into a ``WriteError`` naming its file,
    ``path`` when it names none."""
    try:
        yield
    except WriteError:
        raise
    except OSError as error:
        raise _write_error(error, error.filename or path) from error


def _write_temporary(temporary: pathlib.Path, data: bytes) -> None:
    """Write ``data`` to ``temporary`` and flush it to disk (every run file's one writer)."""
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def atomic_write_bytes(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` to a temporary file, flush it to disk, then rename it over ``path``.

    Raises:
        WriteError: the write failed; ``path`` is as it was and no temporary
            file is left behind.
    """
    path = pathlib.Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        _write_temporary(temporary, data)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, WriteError):
            raise
        raise _write_error(error, path) from error
    except BaseException:  # Ctrl-C: no temporary file left behind either
        temporary.unlink(missing_ok=True)
        raise


def atomic_write_text(path: pathlib.Path, text: str) -> None:
    """``atomic_write_bytes`` for text (UTF-8)."""
    atomic_write_bytes(path, text.encode())


def replace_folder(parent: pathlib.Path, name: str, fill: Callable[[pathlib.Path], object]) -> None:
    """Make ``parent/name`` anew as one unit.

    ``fill(folder)`` writes into ``.<name>.new/`` (what it returns is ignored), which
    is then swapped in by renames, so ``parent/name`` always holds a complete set of
    files. A crash between the two renames leaves the previous set in ``.<name>.old/``.

    Raises:
        WriteError: writing failed (naming the error's own file, else the
            folder), and ``parent/name`` still holds the previous set; or a
            swap failed, and the previous set is in ``.<name>.old/``.
    """
    new, current, old = (parent / n for n in (f".{name}.new", name, f".{name}.old"))
    shutil.rmtree(new, ignore_errors=True)
    try:
        new.mkdir(parents=True)
        fill(new)
    except OSError as error:
        shutil.rmtree(new, ignore_errors=True)  # the previous set stays in place
        if isinstance(error, WriteError):
            raise
        raise _write_error(error, error.filename or new) from error
    with writing(current):
        shutil.rmtree(old, ignore_errors=True)
        if current.exists():
            os.rename(current, old)
        os.rename(new, current)
    shutil.rmtree(old, ignore_errors=True)


_DISK_FULL = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up"}


def run_write_error(error: OSError, run_dir: pathlib.Path) -> RunWriteError:
    """The one-line error for a run stopped by ``error`` while writing its files.

    It names the file, the reason and what to do: continue the run with
    ``jekyll-hyde train --resume RUN`` (every run file is written atomically, so
    nothing written before is lost), or run the same command again when nothing
    of it was saved yet.
    """
    target = error.filename or f"a file in {run_dir}"
    reason = _DISK_FULL.get(error.errno or 0, "")
    detail = error.strerror or str(error)
    reason = f"{reason} ({detail})" if reason else detail
    fix = "free some space" if error.errno in _DISK_FULL else "fix that"
    if (run_dir / "config.yaml").exists():
        then = (
            f"the run is intact: {fix}, then continue it with: jekyll-hyde train --resume {run_dir}"
        )
    else:
        then = f"nothing of the run was saved yet: {fix}, then run the same command again"
    return RunWriteError(f"cannot write {target}: {reason}; {then}")
