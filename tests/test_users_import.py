"""``python -m backend users import FILE.csv``: all or nothing, generated passwords in a 0600 file, 200 accounts."""

from __future__ import annotations

import csv
import stat
import time

import pytest

from backend.accounts import auth
from backend.accounts.bulk import import_users
from backend.cli import main
from backend.errors import ImportFileError

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)


def write_csv(path, rows, header=("username", "role", "password")):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_two_hundred_accounts_with_generated_passwords_in_an_owner_only_file(ctx, tmp_path, capsys):
    source = write_csv(
        tmp_path / "lab.csv",
        [(f"lab{i:03d}", "annotator", "") for i in range(199)] + [("lead", "reviewer", "chosen-password")],
    )
    started = time.perf_counter()
    code = main(["users", "import", str(source), "--data-dir", str(ctx.settings.data_dir)])
    elapsed = time.perf_counter() - started
    assert code == 0, capsys.readouterr().err
    out_file = tmp_path / "lab.passwords.csv"
    assert stat.S_IMODE(out_file.stat().st_mode) == 0o600
    with out_file.open(newline="") as handle:
        generated = list(csv.DictReader(handle))
    assert len(generated) == 199 and {g["role"] for g in generated} == {"annotator"}
    assert len({g["password"] for g in generated}) == 199 and all(len(g["password"]) >= 16 for g in generated)
    assert len(auth.list_users(ctx.database)) == 200
    # the generated and the given passwords sign in (the hash strength is the usual one)
    assert auth.authenticate(ctx.database, generated[7]["username"], generated[7]["password"])
    assert auth.authenticate(ctx.database, "lead", "chosen-password")
    assert ctx.database.scalar("SELECT password_hash FROM users WHERE username = 'lab000'").startswith(
        "scrypt$16384$8$1$"
    )
    print(f"\n200 accounts imported in {elapsed:.1f} s")  # the README's figure (pytest -s)


def test_one_bad_row_imports_nothing_and_names_every_problem(ctx, tmp_path):
    auth.add_user(ctx.database, "taken", "annotator", "password1")
    source = write_csv(
        tmp_path / "bad.csv",
        [
            ("ok1", "annotator", ""),
            ("ok1", "reviewer", ""),
            ("taken", "annotator", ""),
            ("x y", "annotator", ""),
            ("ok2", "boss", ""),
            ("ok3", "annotator", "short"),
        ],
    )
    with pytest.raises(ImportFileError) as caught:
        import_users(ctx.database, source, tmp_path / "out.csv")
    message = str(caught.value)
    for expected in (
        "line 3",
        "also on line 2",
        "line 4: an account named 'taken'",
        "line 5",
        "unknown role 'boss'",
        "at least 8 characters",
        "Nothing was imported",
    ):
        assert expected in message
    assert [u.username for u in auth.list_users(ctx.database)] == ["taken"]
    assert not (tmp_path / "out.csv").exists() and list(tmp_path.glob(".out.csv*")) == []


def test_a_bad_header_or_an_existing_passwords_file_is_refused(ctx, tmp_path):
    with pytest.raises(ImportFileError, match="header"):
        import_users(
            ctx.database,
            write_csv(tmp_path / "h.csv", [("a1", "annotator")], header=("name", "role")),
            tmp_path / "o.csv",
        )
    (tmp_path / "o.csv").write_text("keep me")
    with pytest.raises(ImportFileError, match="exists already"):
        import_users(ctx.database, write_csv(tmp_path / "g.csv", [("a1", "annotator", "")]), tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_text() == "keep me" and auth.list_users(ctx.database) == []
    result = import_users(
        ctx.database, write_csv(tmp_path / "p.csv", [("a2", "admin", "password-given")]), tmp_path / "n.csv"
    )
    assert result["generated_passwords"] == 0 and result["passwords_file"] is None and not (tmp_path / "n.csv").exists()
