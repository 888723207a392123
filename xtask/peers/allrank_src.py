"""Make allRank importable from a source checkout: the one preamble of every script that runs allRank.

allRank's PyPI releases pin a torch with no wheels for current Python, so `ltr` runs allRank (allegro/allRank) from
a source checkout whose root is named by the environment variable ALLRANK_SRC, against a current torch from PyPI:

    python3 -m venv venv && venv/bin/pip install torch numpy scikit-learn attrs
    ALLRANK_SRC=/path/to/allRank venv/bin/python SCRIPT ...

`use_source()` puts the checkout on `sys.path` and replaces two modules that allRank's data loading imports but no
script here needs: `torchvision` (only for `transforms.Compose`, when torchvision is not installed) and
`allrank.utils.file_utils` (Google Cloud Storage paths, through gcsfs and pkg_resources). Import allRank after it.

Users: `xtask/peers/allrank_epoch.py` (allRank as a timed, trained peer) and the fixture generators
`crates/ltr-neural/tests/fixtures/make_allrank_losses.py` and `make_allrank_attention.py`, which put this folder on
their path by its place in the repository.
"""
import os
import pathlib
import sys
import types


def use_source():
    """Put ALLRANK_SRC on the import path and stand in for the modules allRank imports but these scripts never use;
    exit with a message when ALLRANK_SRC is not set. Returns the checkout's root."""
    src = os.environ.get("ALLRANK_SRC")
    if not src:
        sys.exit("set ALLRANK_SRC to the root of an allRank source checkout")
    if not (pathlib.Path(src) / "allrank").is_dir():
        sys.exit(f"ALLRANK_SRC={src} holds no `allrank` package: give the root of an allRank source checkout")
    sys.path.insert(0, src)
    try:
        import torchvision  # noqa: F401
    except ImportError:
        tv = types.ModuleType("torchvision")
        tv.transforms = types.ModuleType("torchvision.transforms")
        tv.transforms.Compose = object
        sys.modules["torchvision"] = tv
        sys.modules["torchvision.transforms"] = tv.transforms
    fu = types.ModuleType("allrank.utils.file_utils")
    for name in ("open_local_or_gs", "is_gs_path", "copy_file_to_local"):
        setattr(fu, name, None)
    sys.modules["allrank.utils.file_utils"] = fu
    return src
