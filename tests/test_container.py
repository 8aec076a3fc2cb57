"""The container, tested without a container engine.

``ci/Dockerfile`` is read by a small parser below, and its entry command is run as the image
runs it: the same argv, with the Dockerfile's environment variables, from the package's own
console script.  Stock clients go through the advertised address, the HEALTHCHECK command is
run as Docker would run it, and the compose file and the GitHub Actions example are checked
for the service, ports and health settings they promise.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tomllib
import zipfile
import tarfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient
import pytest
from kafka import KafkaConsumer, TopicPartition

from tests.clients.helpers import RDKAFKA_LOG, wait_for
from tests.test_serve import parse_ready_line

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "ci" / "Dockerfile"
COMPOSE = ROOT / "ci" / "docker-compose.yml"
WORKFLOW = ROOT / "ci" / "github-actions-example.yml"
#: where the installed console script (and the Python it runs on) live, as /usr/local/bin does
#: in the image
BIN = Path(sys.executable).parent
READY_TIMEOUT_S = 30


# --- the Dockerfile ------------------------------------------------------------------------------

@dataclass
class Image:
    """What the final stage of a Dockerfile sets (its own instructions, not the base image's)."""

    env: dict[str, str] = field(default_factory=dict)
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    expose: set[int] = field(default_factory=set)
    user: str | None = None
    healthcheck: list[str] | None = None
    healthcheck_options: dict[str, str] = field(default_factory=dict)
    stopsignal: str = "SIGTERM"
    copied: list[str] = field(default_factory=list)  # COPY sources from the build context, any stage

    @property
    def command(self) -> list[str]:
        return self.entrypoint + self.cmd


def _instructions(text: str) -> list[tuple[str, str]]:
    result, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # comments and blank lines, also between continuation lines
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, args = (pending + line).partition(" ")
        result.append((keyword.upper(), args.strip()))
        pending = ""
    if pending:
        raise ValueError("the last instruction ends with a line continuation")
    return result


def _exec_form(args: str, instruction: str) -> list[str]:
    value = json.loads(args) if args.startswith("[") else None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{instruction} is not in exec form (a JSON array of strings): {args}")
    return value


def parse_dockerfile(text: str) -> Image:
    instructions = _instructions(text)
    starts = [i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM"]
    if not starts:
        raise ValueError("no FROM")
    image = Image()
    for keyword, args in instructions:
        if keyword == "COPY" and not args.startswith("--from"):
            image.copied += [token for token in shlex.split(args)[:-1]
                             if not token.startswith("--")]
    for keyword, args in instructions[starts[-1] + 1:]:
        if keyword == "ENV":
            tokens = shlex.split(args)
            if all("=" in token for token in tokens):
                image.env.update(token.split("=", 1) for token in tokens)
            else:  # the old "ENV KEY value" form
                key, value = args.split(None, 1)
                image.env[key] = value
        elif keyword == "ENTRYPOINT":
            image.entrypoint = _exec_form(args, keyword)
            image.cmd = []  # as Docker does: a new ENTRYPOINT drops an earlier CMD
        elif keyword == "CMD":
            image.cmd = _exec_form(args, keyword)
        elif keyword == "EXPOSE":
            for token in args.split():
                low, _, high = token.split("/")[0].partition("-")
                image.expose.update(range(int(low), int(high or low) + 1))
        elif keyword == "USER":
            image.user = args
        elif keyword == "STOPSIGNAL":
            image.stopsignal = args
        elif keyword == "HEALTHCHECK":
            match = re.fullmatch(r"((?:--[a-z-]+=\S+\s+)*)CMD\s+(.+)", args)
            if not match:
                raise ValueError(f"HEALTHCHECK without CMD: {args}")
            image.healthcheck_options = dict(option[2:].split("=", 1)
                                             for option in match.group(1).split())
            command = match.group(2)
            image.healthcheck = (_exec_form(command, "HEALTHCHECK CMD") if command.startswith("[")
                                 else ["/bin/sh", "-c", command])
    return image


@pytest.fixture(scope="module")
def image() -> Image:
    return parse_dockerfile(DOCKERFILE.read_text())


def test_dockerfile_parser_reads_the_final_stage():
    image = parse_dockerfile("""
        # syntax comment
        FROM base AS build
        ENV BUILD_ONLY=1
        COPY a b ./
        FROM base
        COPY --from=build /x /x
        ENV A=1 \\
            B="two words"
        ENV C 3
        CMD ["python3"]
        ENTRYPOINT ["run", "it"]
        EXPOSE 9000-9002 80/tcp
        USER 10:10
        HEALTHCHECK --interval=5s --retries=2 CMD check --now
    """)
    assert image.env == {"A": "1", "B": "two words", "C": "3"}
    assert image.command == ["run", "it"]
    assert image.expose == {9000, 9001, 9002, 80}
    assert image.user == "10:10" and image.copied == ["a", "b"]
    assert image.healthcheck == ["/bin/sh", "-c", "check --now"]
    assert image.healthcheck_options == {"interval": "5s", "retries": "2"}
    with pytest.raises(ValueError, match="exec form"):
        parse_dockerfile("FROM base\nENTRYPOINT mockbroker serve\n")


def test_dockerfile_declares_what_the_image_promises(image):
    env = image.env
    assert env["MOCKBROKER_HOST"] == "0.0.0.0"
    assert env["MOCKBROKER_ADVERTISED_HOST"] == "localhost"
    assert (env["MOCKBROKER_PORT"], env["MOCKBROKER_HTTP_PORT"]) == ("9092", "8080")
    # exec form (checked by the parser): mockbroker itself is PID 1 and gets the stop signal
    assert image.command[:2] == ["mockbroker", "serve"]
    assert image.stopsignal in ("SIGTERM", "SIGINT")
    # a user that is not root, by name or number
    assert image.user and image.user.split(":")[0] not in ("root", "0")
    # the configured ports are exposed, with room for three brokers
    first = int(env["MOCKBROKER_PORT"])
    assert {first, first + 1, first + 2, int(env["MOCKBROKER_HTTP_PORT"]),
            int(env["MOCKBROKER_SCHEMA_REGISTRY_PORT"])} <= image.expose
    assert image.healthcheck is not None and image.healthcheck[0] == "python"
    for name in ("interval", "timeout", "start-period"):
        assert re.fullmatch(r"(\d+(ms|s|m|h))+", image.healthcheck_options[name]), name
    assert int(image.healthcheck_options["retries"]) >= 1


def test_build_context_has_everything_the_package_needs(image):
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert {".git", ".venv", ".cache"} <= set(ignored)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = {"pyproject.toml", project["project"]["readme"],
              *project["project"]["license-files"]}
    needed |= {pattern.rstrip("*") for pattern in
               project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert needed <= set(image.copied), "a file the wheel is built from is not copied"
    for path in image.copied:
        assert (ROOT / path).exists(), path
        assert not any(fnmatch.fnmatch(path, pattern) for pattern in ignored), path


# --- the package the image installs (and users install from an index) --------------------------

@dataclass
class Built:
    sdist: Path
    wheel: Path
    site: Path  # the wheel installed there, alone on the path (the dependencies are the venv's)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    """The sdist and wheel built from a copy of this checkout as ``python -m build`` does: the
    build-system requirements installed into a folder of their own, then the backend's hooks."""
    work = tmp_path_factory.mktemp("package")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".cache", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache",
        ".hypothesis", ".import_linter_cache", "spark-warehouse", "metastore_db"))
    system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "--target", str(work / "backend"),
                    *system["requires"]],
                   check=True, capture_output=True, timeout=300)
    # (setuptools' hooks rewrite sys.argv: the output folder is read before the first one)
    hooks = (f"import importlib, sys; out = sys.argv[1]; "
             f"backend = importlib.import_module({system['build-backend']!r}); "
             f"names = [backend.build_sdist(out), backend.build_wheel(out)]; print(*names)")
    result = subprocess.run([sys.executable, "-c", hooks, str(work / "dist")], cwd=source,
                            env={**os.environ, "PYTHONPATH": str(work / "backend")},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    sdist, wheel = (work / "dist" / name for name in result.stdout.split()[-2:])
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "--no-deps", "--target", str(work / "site"),
                    str(wheel)],
                   check=True, capture_output=True, timeout=300)
    return Built(sdist, wheel, work / "site")


def _version() -> str:
    from mockbroker import __version__

    return __version__


def test_sdist_holds_the_sources_and_license_but_no_tests(built):
    with tarfile.open(built.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
        top = sdist.getnames()[0].split("/")[0]
        info = sdist.extractfile(f"{top}/PKG-INFO").read().decode()
    assert {"pyproject.toml", "README.md", "LICENSE", "mockbroker/py.typed",
            "conftest_plugin/plugin.py", "wire/__init__.py"} <= names
    assert not [name for name in names if name.startswith(("tests/", "bench/", "ci/"))]
    assert top == f"mockbroker-{_version()}" and "License-Expression: Apache-2.0" in info


def test_wheel_metadata_is_what_an_index_shows(built):
    with zipfile.ZipFile(built.wheel) as wheel:
        names = set(wheel.namelist())
        info = f"mockbroker-{_version()}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    headers = [line.split(": ", 1) for line in metadata.split("\n\n")[0].splitlines()]
    assert ["Version", _version()] in headers  # one version, from mockbroker/_version.py
    assert ["License-Expression", "Apache-2.0"] in headers
    assert ["License-File", "LICENSE"] in headers and f"{info}/licenses/LICENSE" in names
    assert not [value for key, value in headers if key == "Classifier"
                and value.startswith("License ::")]  # the expression says it
    assert ["Classifier", "Typing :: Typed"] in headers and "mockbroker/py.typed" in names
    assert ["Classifier", "Framework :: Pytest"] in headers
    assert {"mockbroker/__main__.py", "conftest_plugin/spark.py"} <= names
    assert not [name for name in names if name.startswith("tests/")]
    assert "mockbroker = mockbroker.cli:main" in entry_points
    assert "mockbroker = conftest_plugin.plugin" in entry_points
    assert "mockbroker_spark = conftest_plugin.spark" in entry_points


def test_the_installed_wheel_runs_and_keeps_spark_jars_in_the_user_cache(built, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOCKBROKER_")}
    env.update(PYTHONPATH=str(built.site), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    where = subprocess.run(
        [sys.executable, "-c", "import mockbroker, conftest_plugin.spark as s; "
                               "print(mockbroker.__file__); print(s.jars_dir())"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=True)
    package, jars = where.stdout.splitlines()
    assert Path(package).is_relative_to(built.site)  # the installed copy, not the checkout
    assert Path(jars) == tmp_path / "xdg" / "mockbroker" / "jars" / "spark"
    version = subprocess.run([sys.executable, "-m", "mockbroker", "--version"], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=60)
    assert (version.returncode, version.stdout) == (0, f"mockbroker {_version()}\n")


# --- the entry command, run as the image runs it ------------------------------------------------

def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def _free_ports(count: int, avoid: range = range(0)) -> int:
    """The first of ``count`` consecutive ports that are free now (another process may still
    take one before the server binds it; the caller retries)."""
    for _ in range(100):
        with socket.socket() as sock:
            sock.bind(("0.0.0.0", 0))
            first = sock.getsockname()[1]
        ports = range(first, first + count)
        if ports[-1] <= 65535 and not set(ports) & set(avoid) and all(map(_bindable, ports)):
            return first
    raise AssertionError(f"no {count} consecutive free ports")


@dataclass
class Running:
    proc: subprocess.Popen
    env: dict[str, str]
    brokers: list[tuple[str, int]]
    admin: str
    ready_line: str

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{host}:{port}" for host, port in self.brokers)


@pytest.fixture
def run_image(image, tmp_path):
    """Start the image's command; ``run_image(MOCKBROKER_BROKERS="3")`` adds variables as
    ``docker run -e`` would."""
    started = []

    def run(**extra: str) -> Running:
        brokers = int(extra.get("MOCKBROKER_BROKERS", image.env.get("MOCKBROKER_BROKERS", "1")))
        for attempt in range(5):
            port = _free_ports(brokers)
            http_port = _free_ports(1, avoid=range(port, port + brokers))
            registry_port = _free_ports(1, avoid=[*range(port, port + brokers), http_port])
            # Exactly the Dockerfile's variables, except the ports: its fixed 9092, 8080 and
            # 8081 are replaced by free ephemeral ones so that tests can run in parallel
            # (pytest -n auto) and beside anything else listening on those ports.  PATH finds
            # the installed console script and its Python, as the image's PATH does.
            env = {**image.env, "MOCKBROKER_PORT": str(port),
                   "MOCKBROKER_HTTP_PORT": str(http_port),
                   "MOCKBROKER_SCHEMA_REGISTRY_PORT": str(registry_port), **extra,
                   "PATH": os.pathsep.join([str(BIN), os.defpath])}
            log = tmp_path / f"stderr-{len(started)}-{attempt}"
            with log.open("w") as stderr:
                proc = subprocess.Popen(image.command, env=env, cwd=tmp_path, text=True,
                                        stdout=subprocess.PIPE, stderr=stderr)
            started.append(proc)
            readable, _, _ = select.select([proc.stdout], [], [], READY_TIMEOUT_S)
            line = proc.stdout.readline() if readable else ""
            if line:
                return Running(proc, env, *parse_ready_line(line), line)
            proc.kill()
            proc.wait(10)
            if "address already in use" not in log.read_text():  # else a port was taken: retry
                raise AssertionError(f"no ready line; exit code {proc.returncode}; "
                                     f"stderr: {log.read_text()}")
        raise AssertionError("ports kept being taken before the server could bind them")

    yield run
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        proc.stdout.close()


def _stop(image: Image, running: Running) -> int:
    running.proc.send_signal(signal.Signals[image.stopsignal])
    return running.proc.wait(10)


def _healthcheck(image: Image, running: Running) -> subprocess.CompletedProcess:
    return subprocess.run(image.healthcheck, env=running.env, capture_output=True, text=True,
                          timeout=30)


def test_entry_command_serves_stock_clients_through_the_advertised_address(image, run_image):
    running = run_image()
    advertised = image.env["MOCKBROKER_ADVERTISED_HOST"]
    port, http_port = int(running.env["MOCKBROKER_PORT"]), running.env["MOCKBROKER_HTTP_PORT"]
    assert running.brokers == [(advertised, port)]
    assert running.admin == f"http://{advertised}:{http_port}"

    delivered = []
    producer = ck.Producer({"bootstrap.servers": running.bootstrap, "logger": RDKAFKA_LOG,
                            "message.timeout.ms": 15000})
    assert {(b.host, b.port) for b in producer.list_topics(timeout=15).brokers.values()} \
        == {(advertised, port)}
    producer.produce("container", key=b"k", value=b"through the advertised address",
                     on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(15) == 0 and delivered == [None]

    consumer = KafkaConsumer(bootstrap_servers=running.bootstrap, enable_auto_commit=False,
                             request_timeout_ms=10000)
    with contextlib.closing(consumer):
        partition = TopicPartition("container", 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        batches = wait_for(lambda: consumer.poll(timeout_ms=200), "the produced record")
        [record] = batches[partition]
        assert (record.key, record.value) == (b"k", b"through the advertised address")

    assert _stop(image, running) == 0


def test_healthcheck_passes_while_serving_and_fails_once_stopped(image, run_image):
    running = run_image()
    result = _healthcheck(image, running)
    assert result.returncode == 0, result.stderr
    assert _stop(image, running) == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", running.brokers[0][1]), timeout=2)
    assert _healthcheck(image, running).returncode != 0


def test_a_schema_registry_on_its_port_when_asked_for(image, run_image):
    assert "schema_registry=" not in run_image().ready_line  # off by default
    running = run_image(MOCKBROKER_SCHEMA_REGISTRY="true")
    advertised = image.env["MOCKBROKER_ADVERTISED_HOST"]
    port = running.env["MOCKBROKER_SCHEMA_REGISTRY_PORT"]
    assert f" schema_registry=http://{advertised}:{port}" in running.ready_line
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=10) as answer:
        assert json.loads(answer.read()) == {"compatibilityLevel": "BACKWARD"}
    assert _stop(image, running) == 0


def test_three_brokers_on_consecutive_ports(image, run_image):
    running = run_image(MOCKBROKER_BROKERS="3")
    first = int(running.env["MOCKBROKER_PORT"])
    advertised = image.env["MOCKBROKER_ADVERTISED_HOST"]
    expected = [(advertised, first + n) for n in range(3)]
    assert running.brokers == expected
    admin = AdminClient({"bootstrap.servers": running.bootstrap, "logger": RDKAFKA_LOG})
    brokers = admin.list_topics(timeout=15).brokers
    assert sorted((b.id, b.host, b.port) for b in brokers.values()) \
        == [(n, host, port) for n, (host, port) in enumerate(expected)]
    assert _healthcheck(image, running).returncode == 0
    assert _stop(image, running) == 0


# --- YAML: the compose file and the workflow example --------------------------------------------

class _Yaml:
    """A reader for the block-style YAML subset our CI files are written in: mappings,
    sequences, plain/quoted/flow-sequence scalars, ``|`` and ``>`` block scalars, comments.
    Scalars stay strings.  Anything else (tabs, odd indentation, a repeated key, anchors, flow
    mappings) raises ValueError, so a file it reads is valid YAML of the expected shape."""

    KEY = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'#&*!|>%@`{}\[\],-][^:#]*?|-[^\s:][^:#]*?)"""
                     r"""\s*:(?:\s+(.*))?""")

    def __init__(self, text: str):
        if "\t" in text:
            raise ValueError("tab in YAML")
        self.lines = text.split("\n")
        self.i = 0

    def document(self):
        first = self._peek()
        if first is None or first[0] != 0:
            raise ValueError("a document starts at column 0")
        value = self._block(0)
        if self._peek() is not None:
            raise ValueError(f"line {self.i + 1}: unexpected indentation")
        return value

    def _peek(self) -> tuple[int, str] | None:
        """The next line that is neither blank nor a comment, as (indent, content)."""
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() and not line.strip().startswith("#"):
                return len(line) - len(line.lstrip(" ")), line.strip()
            self.i += 1
        return None

    def _block(self, indent: int):
        _, content = self._peek()
        if content == "-" or content.startswith("- "):
            return self._sequence(indent)
        return self._mapping(indent, {})

    def _mapping(self, indent: int, result: dict) -> dict:
        while (line := self._peek()) is not None and line[0] == indent:
            if line[1] == "-" or line[1].startswith("- "):
                raise ValueError(f"line {self.i + 1}: sequence item in a mapping")
            self.i += 1
            self._entry(line[1], indent, result)
        if line is not None and line[0] > indent:
            raise ValueError(f"line {self.i + 1}: unexpected indentation")
        return result

    def _entry(self, content: str, indent: int, result: dict) -> None:
        match = self.KEY.fullmatch(content)
        if not match:
            raise ValueError(f"line {self.i}: not a 'key: value' line: {content!r}")
        key = self._scalar(match.group(1))
        if key in result:
            raise ValueError(f"line {self.i}: repeated key {key!r}")
        result[key] = self._value(match.group(2) or "", indent)

    def _value(self, text: str, indent: int):
        text = self._uncomment(text)
        if text in ("|", "|-", ">", ">-"):
            return self._block_scalar(text, indent)
        if text:
            return self._scalar(text)
        line = self._peek()
        if line is not None and (line[0] > indent or (
                line[0] == indent and (line[1] == "-" or line[1].startswith("- ")))):
            return self._block(line[0])
        return None

    def _sequence(self, indent: int) -> list:
        result = []
        while (line := self._peek()) is not None and line[0] == indent:
            if not (line[1] == "-" or line[1].startswith("- ")):
                break
            self.i += 1
            rest = line[1][1:].lstrip(" ")
            inner = indent + len(line[1]) - len(rest)
            if rest and self.KEY.fullmatch(rest):
                item = {}
                self._entry(rest, inner, item)
                result.append(self._mapping(inner, item))
            else:
                result.append(self._value(rest, indent))
        if line is not None and line[0] > indent:
            raise ValueError(f"line {self.i + 1}: unexpected indentation")
        return result

    def _block_scalar(self, style: str, indent: int) -> str:
        body = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                break
            body.append(line)
            self.i += 1
        while body and not body[-1].strip():
            body.pop()
        if not body:
            return ""
        margin = min(len(line) - len(line.lstrip(" ")) for line in body if line.strip())
        lines = [line[margin:] for line in body]
        text = "\n".join(lines) if style.startswith("|") else " ".join(lines)
        return text if style.endswith("-") else text + "\n"

    FLOW_ITEM = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,"'\s][^,]*?)\s*(?:,|$)""")

    @staticmethod
    def _uncomment(text: str) -> str:
        if text.startswith("#"):
            return ""
        if text.startswith(("'", '"')):
            quote = re.match(r""""(?:[^"\\]|\\.)*"|'(?:[^']|'')*'""", text)
            if not quote:
                raise ValueError(f"unterminated quote: {text}")
            rest = text[quote.end():].strip()
            if rest and not rest.startswith("#"):
                raise ValueError(f"text after a quoted scalar: {text}")
            return quote.group(0)
        return re.split(r"\s#", text, maxsplit=1)[0].strip()

    def _scalar(self, text: str):
        text = self._uncomment(text)
        if text.startswith('"'):
            return json.loads(text)
        if text.startswith("'"):
            return text[1:-1].replace("''", "'")
        if text.startswith("["):
            if not text.endswith("]"):
                raise ValueError(f"unterminated flow sequence: {text}")
            inner, items, pos = text[1:-1].strip(), [], 0
            while pos < len(inner):
                item = self.FLOW_ITEM.match(inner, pos)
                if not item or item.end() == pos:
                    raise ValueError(f"invalid flow sequence: {text}")
                items.append(self._scalar(item.group(1)))
                pos = item.end()
            return items
        if text[0] in "&*!%@`{|>" or ": " in text or text.endswith(":"):
            raise ValueError(f"unsupported or invalid plain scalar: {text}")
        return text


def parse_yaml(text: str):
    return _Yaml(text).document()


def test_yaml_reader_reads_the_subset_and_refuses_the_rest():
    assert parse_yaml("""
a:
  b: "x: y"   # comment
  c: ['p', "q, 1", r]
  list:
    - 1
    - k: v
      other: w
  same-indent:
  - s
  folded: >-
    one
    two
  literal: |
    line 1
    line 2
z: 'it''s'
""".lstrip("\n")) == {"a": {"b": "x: y", "c": ["p", "q, 1", "r"], "list": ["1", {"k": "v", "other": "w"}],
                             "same-indent": ["s"], "folded": "one two",
                             "literal": "line 1\nline 2\n"},
                       "z": "it's"}
    for bad in ["a:\n\tb: 1\n", "a: 1\n   b: 2\n", "a: 1\na: 2\n", "a: 'open\n", "a: b: c\n",
                "a:\n  - 1\n  b: 2\n", "a: &anchor 1\n", "just text\n", "a: {b: 1}\n",
                " a: 1\n"]:
        with pytest.raises(ValueError):
            parse_yaml(bad)


def _ports(mappings) -> set[tuple[int, int]]:
    pairs = set()
    for mapping in mappings:
        host, container = mapping.split(":")
        pairs.add((int(host), int(container)))
    return pairs


def _uncomment_example(text: str, first_line: str) -> str:
    """The file with the commented example starting at ``first_line`` uncommented, as a user
    would uncomment it."""
    lines = text.split("\n")
    start = lines.index(first_line)
    indent = first_line[:len(first_line) - len(first_line.lstrip(" "))]
    end = start
    while end < len(lines) and lines[end].startswith(indent + "#"):
        lines[end] = indent + lines[end][len(indent) + 2:]
        end += 1
    return "\n".join(lines)


def test_compose_file_builds_the_image_and_publishes_its_ports(image):
    text = COMPOSE.read_text()
    compose = parse_yaml(text)
    service = compose["services"]["mockbroker"]
    context = (COMPOSE.parent / service["build"]["context"]).resolve()
    assert context == ROOT and (context / service["build"]["dockerfile"]) == DOCKERFILE
    published = _ports(service["ports"])
    for name in ("MOCKBROKER_PORT", "MOCKBROKER_HTTP_PORT"):
        port = int(image.env[name])
        assert (port, port) in published, f"{name} is not published on the same number"
    assert service["environment"]["MOCKBROKER_ADVERTISED_HOST"] \
        == "${MOCKBROKER_ADVERTISED_HOST:-localhost}"
    assert {"interval", "timeout", "retries"} <= set(service["healthcheck"])

    # the commented test runner: waits for a healthy broker and reaches it by service name,
    # which the brokers advertise when started as the comment says
    assert "MOCKBROKER_ADVERTISED_HOST=mockbroker docker compose" in text
    example = parse_yaml(_uncomment_example(text, "  # tests:"))["services"]["tests"]
    assert example["depends_on"] == {"mockbroker": {"condition": "service_healthy"}}
    assert f"--kafka-bootstrap=mockbroker:{image.env['MOCKBROKER_PORT']}" in example["command"]


def test_github_actions_example_runs_tests_against_a_service_container(image):
    workflow = parse_yaml(WORKFLOW.read_text())
    jobs = workflow["jobs"]
    [(name, job)] = [(name, job) for name, job in jobs.items() if "services" in job]
    service = job["services"]["mockbroker"]
    port = int(image.env["MOCKBROKER_PORT"])
    http_port = int(image.env["MOCKBROKER_HTTP_PORT"])
    assert {(port, port), (http_port, http_port)} <= _ports(service["ports"])
    assert service["env"]["MOCKBROKER_ADVERTISED_HOST"] == "localhost"
    assert re.search(r"--health-interval \S+", service["options"])
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert any("pytest" in run and f"--kafka-bootstrap=localhost:{port}" in run for run in runs)

    # the image comes from the job it needs, which builds it from ci/Dockerfile
    builder = jobs[job["needs"]]
    assert service["image"] == f"${{{{ needs.{job['needs']}.outputs.image }}}}"
    [build] = [step for step in builder["steps"]
               if step.get("uses", "").startswith("docker/build-push-action@")]
    assert build["with"]["file"] == "ci/Dockerfile" and build["with"]["push"] == "true"
    assert build["with"]["tags"] == builder["outputs"]["image"]
