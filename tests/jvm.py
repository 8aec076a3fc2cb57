"""Quicker start-up for the JVMs of the tests: Kafka's command-line tools, and the Java
programs of ``tests/clients/java``.

Each program there is compiled once (:func:`compiled`), not at every launch as ``java
File.java`` does, which costs two to four seconds of CPU a run; the classes are kept in
``.cache/java-classes/`` as a jar named after the source, the classpath and the JVM, written
under a file lock and renamed into place whole, so workers compiling at once never see half of
one.

A tool run of a second or less spends most of it starting: loading and verifying a few
thousand classes from the jars, and compiling hot code twice over.  :func:`short_lived` gives
such a JVM the client compiler only and the serial collector, and a class-data-sharing archive
of the classes the same classpath loaded before (JDK 13+'s dynamic archives): the first run of
a classpath writes the archive as it exits, every later run maps it in.  On the tools that
takes a run from about 1.0 s to 0.4 s of CPU.

The archive sits in ``.cache/cds/``, named after the classpath and the JVM it was written by;
a JVM that cannot use it (another Java, changed jars) ignores it and says nothing, as
``-Xlog:disable`` keeps the class-sharing warnings off the tool's stdout.  One process at a time
writes an archive (a file lock), to a name of its own, renamed into place when complete, so
test workers running at once never map a half-written one.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "cds"
CLASSES = CACHE.parent / "java-classes"
#: a short-lived JVM: no optimising compiler, the collector with the least start-up
QUICK = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
_tried: set[Path] = set()


def _java_identity() -> str:
    java = shutil.which("java") or "java"
    return os.path.realpath(java)


def compiled(source: Path, classpath: str) -> str:
    """The classpath to run ``source``'s class on: a jar of its compiled classes first, then
    ``classpath`` (compiled now if this source, classpath and JVM were not before).  A jar, not
    a directory, as a class-sharing archive takes classes from jars only."""
    key = hashlib.sha256(f"{_java_identity()}\n{classpath}\n".encode() + source.read_bytes())
    out = CLASSES / f"{source.stem}-{key.hexdigest()[:16]}.jar"
    if not out.exists():
        CLASSES.mkdir(parents=True, exist_ok=True)
        with open(CLASSES / f"{out.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not out.exists():
                _compile(source, classpath, out)
    return f"{out}{os.pathsep}{classpath}"


def _compile(source: Path, classpath: str, jar: Path) -> None:
    with tempfile.TemporaryDirectory(dir=CLASSES) as work:
        done = subprocess.run(
            ["javac", *(f"-J{option}" for option in QUICK), "-nowarn", "-d", work,
             "-cp", classpath, str(source)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"javac {source.name}: {done.stderr[-3000:]}"
        partial = Path(work) / jar.name
        with zipfile.ZipFile(partial, "w") as archive:
            for path in sorted(Path(work).rglob("*.class")):
                archive.write(path, path.relative_to(work).as_posix())
        os.replace(partial, jar)


def program(source: Path, classpath: str, *, quick: bool = False,
            options: tuple[str, ...] = ()) -> list[str]:
    """The command that runs the class of ``source`` (named as its file) on ``classpath``:
    compiled once, sharing the classes an earlier run of it archived, with the client
    compiler only when ``quick`` (for programs that end within seconds), and ``options``
    after those."""
    full = compiled(source, classpath)
    archive = archive_of(full)
    chosen = [*(QUICK if quick else ()), "-Xlog:disable", "-Xlog:all=off"]
    if archive.exists():
        chosen.append(f"-XX:SharedArchiveFile={archive}")
    return ["java", *chosen, *options, "-cp", full, source.stem]


def archive_of(classpath: str) -> Path:
    """Where the class-sharing archive of ``classpath`` is kept."""
    key = hashlib.sha256(f"{_java_identity()}\n{classpath}".encode()).hexdigest()[:16]
    return CACHE / f"{key}.jsa"


def short_lived(classpath: str) -> list[str]:
    """JVM options for a short run on ``classpath``: :data:`QUICK`, and the class-sharing
    archive to use, or the one to write if nobody has yet (this process tries once)."""
    archive = archive_of(classpath)
    options = [*QUICK, "-Xlog:disable", "-Xlog:all=off"]
    if archive.exists():
        return [*options, f"-XX:SharedArchiveFile={archive}"]
    if archive in _tried:
        return options
    _tried.add(archive)
    CACHE.mkdir(parents=True, exist_ok=True)
    lock = open(CACHE / f"{archive.name}.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another worker is writing it
        lock.close()
        return options
    partial = archive.with_name(f"{archive.stem}.{os.getpid()}.partial")
    _writers[partial] = (archive, lock)
    return [*options, f"-XX:ArchiveClassesAtExit={partial}"]


#: archives being written by a JVM of this process -> (final name, the lock held meanwhile)
_writers: dict[Path, tuple[Path, object]] = {}


def finished(options: list[str], exited: bool) -> None:
    """After the JVM started with ``options`` ended: an archive it wrote as it ``exited`` (not
    killed, which may cut the writing short) is put in place."""
    for option in options:
        if option.startswith("-XX:ArchiveClassesAtExit="):
            partial = Path(option.split("=", 1)[1])
            archive, lock = _writers.pop(partial)
            if exited and partial.exists() and partial.stat().st_size > 0:
                os.replace(partial, archive)
            else:
                partial.unlink(missing_ok=True)
            lock.close()


def run(classpath: str, main: str | Path, *args: str, jvm: tuple[str, ...] = (),
        **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` of ``java`` with :func:`short_lived` options, ``jvm`` after them;
    ``main`` is a class, or a source file to compile once (:func:`compiled`) and run."""
    if isinstance(main, Path):
        classpath, main = compiled(main, classpath), main.stem
    options = short_lived(classpath)
    exited = False
    try:
        done = subprocess.run(["java", *options, *jvm, "-cp", classpath, main, *args],
                              **kwargs)
        exited = done.returncode >= 0  # not ended by a signal
        return done
    finally:
        finished(options, exited)
