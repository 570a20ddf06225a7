"""Archives for the tests: .tar(.gz) and .zip files written with the standard library's own
writers, from {member name: bytes}.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import io
import tarfile
import zipfile


def add_tar_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def make_tar(path, members: dict[str, bytes], mode: str = "w:gz"):
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            add_tar_member(tar, name, data)
    return path


def make_zip(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path
