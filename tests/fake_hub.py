"""A fake Hugging Face Hub for tests: an ``HfApi`` subclass keeping repos in memory (no network).

It implements what CompStudio's Hub backup uses: ``create_repo`` (called by CommitScheduler's constructor),
``create_commit`` (add and delete operations), ``list_repo_files`` and ``hf_hub_download``; everything else
is HfApi's own code (``run_as_future`` runs commits in HfApi's worker thread, as on a real Space).
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import httpx2
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError


def _response(status: int, url: str) -> httpx2.Response:
    return httpx2.Response(status, request=httpx2.Request("GET", url))


class FakeHub(HfApi):
    def __init__(self) -> None:
        super().__init__(token="fake-token")
        self.repos: dict[str, dict[str, bytes]] = {}
        self.private: dict[str, bool] = {}
        self.commits: list[tuple[str, list[str], list[str]]] = []  # (repo, added, deleted)
        self.fail_list = False
        self._lock = threading.Lock()

    def _repo(self, repo_id: str) -> dict[str, bytes]:
        if repo_id not in self.repos:
            url = f"https://huggingface.co/datasets/{repo_id}"
            raise RepositoryNotFoundError(f"{repo_id} not found", response=_response(404, url))
        return self.repos[repo_id]

    def create_repo(self, repo_id, *, private=None, repo_type=None, exist_ok=False, **kwargs):
        with self._lock:
            if repo_id not in self.repos:
                self.repos[repo_id] = {}
                self.private[repo_id] = bool(private)
        return SimpleNamespace(repo_id=repo_id, repo_type=repo_type)

    def create_commit(self, repo_id, operations, *, commit_message="", repo_type=None, revision=None, **kwargs):
        with self._lock:
            files = self._repo(repo_id)
            added, deleted = [], []
            for op in operations:
                if isinstance(op, CommitOperationAdd):
                    with op.as_file() as handle:
                        files[op.path_in_repo] = handle.read()
                    added.append(op.path_in_repo)
                elif isinstance(op, CommitOperationDelete):
                    files.pop(op.path_in_repo, None)
                    deleted.append(op.path_in_repo)
            self.commits.append((repo_id, added, deleted))
            return SimpleNamespace(oid=f"commit-{len(self.commits)}", commit_message=commit_message)

    def list_repo_files(self, repo_id, *, revision=None, repo_type=None, token=None):
        if self.fail_list:
            raise ConnectionError("the Hub cannot be reached")
        with self._lock:
            return sorted(self._repo(repo_id))

    def hf_hub_download(self, repo_id, filename, *, repo_type=None, local_dir=None, **kwargs):
        with self._lock:
            files = self._repo(repo_id)
            if filename not in files:
                url = f"https://huggingface.co/datasets/{repo_id}/{filename}"
                raise EntryNotFoundError(f"{filename} not in {repo_id}", response=_response(404, url))
            target = Path(local_dir) / filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[filename])
        return str(target)
