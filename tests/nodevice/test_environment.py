"""Every NUMBA_VULKAN_* variable is checked at import: a malformed or out-of-range value never
breaks ``import numba_vulkan`` and is never taken silently; a RuntimeWarning names the
variable, the value and the default used instead (docs/environment.md)."""

import importlib.util
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import numba_vulkan
import numba_vulkan.config

PACKAGE = str(Path(numba_vulkan.__file__).resolve().parents[1])

# (variable, bad value, config attribute, default)
BAD = [
    ("NUMBA_VULKAN_TIMEOUT", "abc", "TIMEOUT", 0.0),
    ("NUMBA_VULKAN_TIMEOUT", "-1", "TIMEOUT", 0.0),
    ("NUMBA_VULKAN_TIMEOUT", "nan", "TIMEOUT", 0.0),
    ("NUMBA_VULKAN_TIMEOUT", "inf", "TIMEOUT", 0.0),
    ("NUMBA_VULKAN_POOL_MB", "-5", "POOL_MB", 1024),
    ("NUMBA_VULKAN_POOL_MB", str(2**60), "POOL_MB", 1024),
    ("NUMBA_VULKAN_POOL_MB", "lots", "POOL_MB", 1024),
    ("NUMBA_VULKAN_UNROLL", "100", "UNROLL", 8),
    ("NUMBA_VULKAN_UNROLL", "0", "UNROLL", 8),
    ("NUMBA_VULKAN_DEBUG", "7", "DEBUG", 0),
    ("NUMBA_VULKAN_VALIDATE", "-1", "VALIDATE", 1),
    ("NUMBA_VULKAN_CACHE", "2", "CACHE", 1),
    ("NUMBA_VULKAN_SYNC", "maybe", "SYNC", 0),
    ("NUMBA_VULKAN_INT64", "3", "INT64", 0),
    ("NUMBA_VULKAN_NARROW", "-1", "NARROW", 0),
    ("NUMBA_VULKAN_PRINT_WORDS", "8", "PRINT_WORDS", 1 << 16),
    ("NUMBA_VULKAN_HIDE_INT_RANGES", "64", "HIDE_INT_RANGES", None),
    ("NUMBA_VULKAN_SELFTEST", "sometimes", "SELFTEST", 1),
    ("NUMBA_BOUNDSCHECK", "5", "BOUNDSCHECK", None),
    ("NUMBA_VULKAN_FMA", "always", "FMA", ""),
    ("NUMBA_VULKAN_SUBNORMALS32", "flush", "SUBNORMALS32", ""),
    ("NUMBA_VULKAN_DRIVER_DIV", "fast", "DRIVER_DIV", ""),
]


def _config(env):
    code = ("import warnings, json\nwarnings.simplefilter('always')\n"
            "import numba_vulkan.config as c\n"
            "print(json.dumps({k: getattr(c, k) for k in dir(c) if k.isupper() and k[0] != '_'}))")  # fmt: skip
    full = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    full.update(env, PYTHONPATH=PACKAGE)
    r = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                       timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    import json

    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def _config_here(monkeypatch, env):
    """config.py run afresh in this process (it imports only the standard library) with
    `env` as the only NUMBA_ variables: its values, and its warnings' text."""
    for k in list(os.environ):
        if k.startswith("NUMBA_"):
            monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    spec = importlib.util.spec_from_file_location("config_under_test",
                                                  numba_vulkan.config.__file__)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec.loader.exec_module(module)
    assert all(w.category is RuntimeWarning for w in caught), caught
    return vars(module), "\n".join(str(w.message) for w in caught)


@pytest.mark.parametrize(("name", "value", "attr", "default"), BAD,
                         ids=[f"{n}={v}" for n, v, _, _ in BAD])  # fmt: skip
def test_bad_value_warns_and_takes_the_default(name, value, attr, default, monkeypatch):
    values, err = _config_here(monkeypatch, {name: value})
    assert values[attr] == default
    assert name in err and repr(value) in err and repr(default) in err, err


def test_good_values_are_taken(monkeypatch):
    values, err = _config_here(monkeypatch, {
        "NUMBA_VULKAN_TIMEOUT": "2.5", "NUMBA_VULKAN_POOL_MB": "0", "NUMBA_VULKAN_UNROLL": "1",
        "NUMBA_VULKAN_DEBUG": "yes", "NUMBA_VULKAN_DUMP": "kir,spirv"})
    assert (values["TIMEOUT"], values["POOL_MB"], values["UNROLL"], values["DEBUG"]) == (2.5, 0, 1, 1)
    assert values["DUMP"] == "kir,spirv" and not err


def test_unknown_dump_stage_is_named(monkeypatch):
    values, err = _config_here(monkeypatch, {"NUMBA_VULKAN_DUMP": "kir,asm"})
    assert values["DUMP"] == "kir" and "'asm'" in err


def test_import_survives_every_bad_value_at_once():
    values, err = _config({name: value for name, value, _, _ in BAD})
    assert values["TIMEOUT"] == 0.0 and values["POOL_MB"] == 1024


def test_every_variable_is_documented():
    """docs/environment.md names every variable the package reads."""
    import re

    docs = Path(__file__).resolve().parents[2] / "docs" / "environment.md"
    if not docs.exists():
        pytest.skip("not a source checkout")
    text = docs.read_text()
    src = Path(numba_vulkan.__file__).resolve().parent
    read = set()
    for f in src.rglob("*.py"):
        read.update(re.findall(r"NUMBA_VULKAN_[A-Z0-9_]+", f.read_text()))
    missing = sorted(v for v in read if v not in text)
    assert not missing, missing
