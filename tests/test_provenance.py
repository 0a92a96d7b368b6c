"""Provenance's commit: the env var wins; git's HEAD is marked -dirty where tracked files
differ from it (a tree copy whose .git lags its files must not claim the older commit)."""

import subprocess

import pytest

from tilepick import provenance


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("TILEPICK_COMMIT", raising=False)
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()
    return tmp_path, head


def test_clean_tree_is_its_head(repo):
    path, head = repo
    (path / "untracked.txt").write_text("not part of the commit's tree\n")
    assert provenance._git_commit(str(path)) == head


def test_changed_tracked_file_marks_the_commit_dirty(repo):
    path, head = repo
    (path / "a.py").write_text("x = 2\n")
    assert provenance._git_commit(str(path)) == head + provenance.DIRTY


def test_env_wins_and_no_repo_is_unknown(repo, tmp_path_factory, monkeypatch):
    path, _ = repo
    monkeypatch.setenv("TILEPICK_COMMIT", "abc123")
    assert provenance._git_commit(str(path)) == "abc123"
    monkeypatch.delenv("TILEPICK_COMMIT")
    assert provenance._git_commit(str(tmp_path_factory.mktemp("norepo"))) == "unknown"


def test_git_dirty_says_clean_changed_or_unknown(repo, tmp_path_factory):
    path, _ = repo
    assert provenance.git_dirty(str(path)) is False
    (path / "a.py").write_text("x = 3\n")
    assert provenance.git_dirty(str(path)) is True
    assert provenance.git_dirty(str(tmp_path_factory.mktemp("norepo"))) is None
