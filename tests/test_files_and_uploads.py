"""Issue 15 §1 and §3: only files the app owns are served, admins import only below ``import_dir``, and every
upload has a size limit and a type check (the real app over HTTP, signed in as an admin)."""

from __future__ import annotations

import os

import pytest
from conftest import VILPACT_DATA
from e2e_helpers import ApiClient, ApiError

PASSWORD = "password1"


@pytest.fixture(scope="module")
def running(served_app):
    # every tab built with its page (lazy_tabs=False): the upload check reads every upload of the admin's page
    app = served_app({"boss": "admin"}, password=PASSWORD, max_upload_mb=0.05, lazy_tabs=False)
    root = app.ctx.settings.data_dir.parent
    media = app.ctx.settings.media_dir
    media.mkdir(parents=True, exist_ok=True)
    (media / "owned.txt").write_text("ours")
    (root / "secret.txt").write_text("not the app's")
    os.symlink(root / "secret.txt", media / "link-out.txt")  # a link inside media pointing out of it
    return app


def test_a_file_in_the_media_folder_is_served(running):
    client = ApiClient(running.url, "boss", PASSWORD)
    media = running.ctx.settings.media_dir.resolve()
    reply = client.http.get(f"/gradio_api/file={media}/owned.txt")
    assert reply.status_code == 200 and reply.text == "ours"


@pytest.mark.parametrize(
    "path",
    [
        "{media}/../compstudio.db",  # traversal
        "{media}/%2e%2e/compstudio.db",  # encoded traversal
        "{media}/%2E%2E%2Fcompstudio.db",  # encoded slash too
        "{media}/..%2f..%2fsecret.txt",
        "{media}/link-out.txt",  # a symlink inside media pointing out
        "{data}/compstudio.db",  # absolute paths outside media
        "{data}/demo-accounts.json",
        "/etc/passwd",
        "{root}/secret.txt",
    ],
)
def test_paths_outside_the_media_folder_are_refused(running, path):
    settings = running.ctx.settings
    url_path = path.format(
        media=settings.media_dir.resolve(), data=settings.data_dir.resolve(), root=settings.data_dir.resolve().parent
    )
    client = ApiClient(running.url, "boss", PASSWORD)
    for route in (f"/gradio_api/file={url_path}", f"/gradio_api/file/{url_path.lstrip('/')}"):
        reply = client.http.get(route)
        assert reply.status_code in (400, 403, 404), f"{route}: {reply.status_code}"
        assert "not the app's" not in reply.text and "SQLite" not in reply.text


def test_admin_imports_read_only_below_the_import_folder(running):
    client = ApiClient(running.url, "boss", PASSWORD)
    db = running.ctx.database
    before = db.scalar("SELECT count(*) FROM sequences")
    data_dir = running.ctx.settings.data_dir.resolve()
    import_root = running.ctx.settings.import_root
    import_root.mkdir(parents=True, exist_ok=True)
    (import_root / "outside").symlink_to(VILPACT_DATA, target_is_directory=True)
    for typed in (str(VILPACT_DATA), "../", str(data_dir), "/etc", "outside", "inside/../../"):
        with pytest.raises(ApiError, match="imports only from"):
            client.call("admin_import_vilpact", typed, "")
        with pytest.raises(ApiError, match="imports only from"):
            client.call("admin_import_vilpact", "inside", typed)  # the video folder too
    assert db.scalar("SELECT count(*) FROM sequences") == before
    with pytest.raises(ApiError, match="not a folder"):  # a path inside is read (and this one is missing)
        client.call("admin_import_vilpact", "missing", "")


def test_uploads_over_the_size_limit_are_refused_with_a_message(running):
    client = ApiClient(running.url, "boss", PASSWORD)
    big = b"x" * (60 * 1024)  # the limit here is 0.05 MB
    reply = client.http.post("/gradio_api/upload", files={"files": ("bank.jsonl", big)})
    assert reply.status_code == 413 and "maximum allowed size" in reply.text
    small = client.http.post("/gradio_api/upload", files={"files": ("bank.jsonl", b"{}\n")})
    assert small.status_code == 200


def test_every_upload_names_its_file_types_and_a_wrong_type_is_refused(running):
    from gradio.components import File, UploadButton

    inputs_of_events = {block._id for fn in running.shell.blocks["/admin"].fns.values() for block in fn.inputs}
    uploads = [
        block
        for block in running.shell.blocks["/admin"].blocks.values()
        if isinstance(block, (File, UploadButton)) and block._id in inputs_of_events and block.interactive is not False
    ]
    assert len(uploads) >= 4  # agreement CSV, in-context JSONL, VQA images, VQA items file
    for block in uploads:
        assert block.file_types, f"the upload {block.label!r} ({block.elem_id}) accepts any file type"
    client = ApiClient(running.url, "boss", PASSWORD)
    uploaded = client.http.post("/admin/gradio_api/upload", files={"files": ("bank.exe", b"MZ")}).json()[0]
    upload = next(block for block in uploads if block.elem_id == "icl_upload_file")
    admin_fns = running.shell.blocks["/admin"].fns
    index = next(i for i, fn in admin_fns.items() if fn.fn and fn.api_name == "icl_ui_upload")
    inputs = [block._id for block in admin_fns[index].inputs]
    data = [{"path": uploaded, "meta": {"_type": "gradio.FileData"}} if i == upload._id else "x" for i in inputs]
    reply = client.http.post(
        "/admin/gradio_api/run/predict", json={"data": data, "fn_index": index, "session_hash": "u"}
    )
    assert "Invalid file type" in reply.text
