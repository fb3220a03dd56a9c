"""sqlq_build -- the PEP 517 build backend of the sqlq Python package.

The package is pure Python (it loads libsqlq with ctypes), so building it is
zipping sqlq/ with the metadata a wheel needs (PEP 427: METADATA, WHEEL,
RECORD).  This backend uses only the standard library, so pip needs nothing
from an index to build it: `pip install bindings/python` works offline, in a
fresh venv, where setuptools' backend would first be downloaded into pip's
isolated build environment.  Name and version come from pyproject.toml.
"""

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "sqlq"


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata():
    p = _project()
    return (f"Metadata-Version: 2.1\nName: {p['name']}\nVersion: {p['version']}\n"
            f"Summary: {p['description']}\nRequires-Python: {p['requires-python']}\n")


def _dist_info():
    p = _project()
    return f"{p['name']}-{p['version']}.dist-info"


def _sources():
    """(path in the archive, path on disk) of every module of the package, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                out.append((os.path.relpath(full, ROOT), full))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def _wheel_files():
    info = _dist_info()
    files = []
    for arc, full in _sources():
        with open(full, "rb") as f:
            files.append((arc, f.read()))
    files.append((f"{info}/METADATA", _metadata().encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: sqlq_build\n"
                  b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    record = "".join(_record_line(arc, data) for arc, data in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode()))
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = _dist_info()
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as f:
        f.write(_metadata())
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    name = f"{p['name']}-{p['version']}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in _wheel_files():
            z.writestr(zipfile.ZipInfo(arc, (1980, 1, 1, 0, 0, 0)), data)
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = f"{p['name']}-{p['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        paths = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml"))]
        paths += [(os.path.relpath(full, ROOT), full) for full in
                  (os.path.join(ROOT, "build_backend", "sqlq_build.py"),)]
        paths += _sources()
        for arc, full in paths:
            tar.add(full, arcname=f"{base}/{arc}")
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
    return name
